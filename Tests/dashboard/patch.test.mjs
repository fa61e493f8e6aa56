import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyMutation, applyPatch, stateFromDocument } from '../../Sources/FlagServer/Dashboard/patch.js';

function demo() {
    return stateFromDocument('demo', {
        schema: 1, set: 'demo', version: 41,
        flags: { 'new-checkout': { type: 'bool', killed: false }, 'dark-mode': { type: 'bool' }, old: { type: 'int' } },
        cohorts: { beta: { include: ['u-1'] }, qa: { include: ['qa-1'] } },
    });
}

test('a state from a document', () => {
    const state = demo();
    assert.equal(state.name, 'demo');
    assert.equal(state.version, 41);
    assert.deepEqual(Object.keys(state.flags), ['new-checkout', 'dark-mode', 'old']);
});

test('a patch on the current version changes, adds and removes in place', () => {
    const state = demo();
    const flags = state.flags;
    const result = applyPatch(state, {
        version: 42, base: 41,
        flags: { 'new-checkout': { type: 'bool', killed: true }, added: { type: 'string' } },
        cohorts: { qa: { include: ['qa-1', 'qa-2'] } },
        removed: { flags: ['old'], cohorts: ['beta'] },
    });
    assert.deepEqual(result, {
        status: 'applied', version: 42, flags: ['new-checkout', 'added'], removedFlags: ['old'], cohorts: ['qa'],
        removedCohorts: ['beta'],
    });
    assert.equal(state.version, 42);
    assert.equal(state.flags, flags, 'in place');
    assert.equal(state.flags['new-checkout'].killed, true);
    assert.deepEqual(Object.keys(state.flags).sort(), ['added', 'dark-mode', 'new-checkout']);
    assert.deepEqual(state.cohorts, { qa: { include: ['qa-1', 'qa-2'] } });
});

test('a patch with missing members is read as empty', () => {
    const state = demo();
    assert.equal(applyPatch(state, { version: 42, base: 41 }).status, 'applied');
    assert.equal(state.version, 42);
    assert.equal(Object.keys(state.flags).length, 3);
});

test('a patch on another base asks for a refetch and changes nothing', () => {
    const state = demo();
    assert.deepEqual(applyPatch(state, { version: 44, base: 43, flags: { x: {} } }), { status: 'gap' });
    assert.equal(state.version, 41);
    assert.equal(state.flags.x, undefined);
    assert.deepEqual(applyPatch(state, { base: 41 }), { status: 'gap' }, 'no version');
});

test('a patch the state already has is stale', () => {
    const state = demo();
    assert.deepEqual(applyPatch(state, { version: 41, base: 40, flags: { x: {} } }), { status: 'stale' });
    assert.equal(state.flags.x, undefined);
});

test('the answer to a write applies when it is the next version, then its patch is stale', () => {
    const state = demo();
    const answer = { set: 'demo', version: 42, changed: true, key: 'new-checkout', flag: { type: 'bool', killed: true } };
    assert.deepEqual(applyMutation(state, answer), { status: 'applied', version: 42, flags: ['new-checkout'], cohorts: [] });
    assert.equal(state.flags['new-checkout'].killed, true);
    assert.deepEqual(applyPatch(state, { version: 42, base: 41, flags: { 'new-checkout': { killed: true } } }), { status: 'stale' });
});

test('answers that cannot be applied alone', () => {
    const state = demo();
    assert.deepEqual(applyMutation(state, { version: 41, changed: false, key: 'x', flag: {} }), { status: 'unchanged' });
    assert.deepEqual(applyMutation(state, { version: 43, changed: true, key: 'x', flag: {} }), { status: 'refetch' });
    assert.deepEqual(applyMutation(state, { version: 42, changed: true }), { status: 'refetch' }, 'rollback: no item');
    assert.equal(state.version, 41);
    assert.deepEqual(applyMutation(state, { version: 42, changed: true, name: 'qa', cohort: { include: [] } }),
        { status: 'applied', version: 42, flags: [], cohorts: ['qa'] });
    assert.deepEqual(state.cohorts.qa, { include: [] });
});
