import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedMembers, deepEqual, diffMembers, jsonText } from '../../Sources/FlagServer/Dashboard/jsondiff.js';

test('deep equality ignores member order, not array order', () => {
    assert.equal(deepEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }), true);
    assert.equal(deepEqual([1, 2], [2, 1]), false);
    assert.equal(deepEqual({ a: 1 }, { a: 1, b: undefined }), false);
    assert.equal(deepEqual(null, {}), false);
    assert.equal(deepEqual('1', 1), false);
});

const before = {
    type: 'bool', killed: false, default: false,
    rules: [{ name: 'beta', cohort: 'beta', value: true }],
    rollout: { value: true, schedule: [{ at: 'd0', percent: 1 }, { at: 'd1', percent: 2 }] },
    owner: 'payments',
};
const after = {
    type: 'bool', killed: true, default: false,
    rules: [{ name: 'beta', cohort: 'beta', value: true }, { name: 'staff', cohort: 'staff', value: true }],
    rollout: { value: true, schedule: [{ at: 'd0', percent: 1 }, { at: 'd1', percent: 5 }] },
    description: 'new',
};

test('rows member by member, descending into objects and differing arrays', () => {
    assert.deepEqual(diffMembers(before, after), [
        { path: 'type', before: 'bool', after: 'bool', change: 'same' },
        { path: 'killed', before: false, after: true, change: 'changed' },
        { path: 'default', before: false, after: false, change: 'same' },
        { path: 'rules[0].name', before: 'beta', after: 'beta', change: 'same' },
        { path: 'rules[0].cohort', before: 'beta', after: 'beta', change: 'same' },
        { path: 'rules[0].value', before: true, after: true, change: 'same' },
        { path: 'rules[1]', before: undefined, after: { name: 'staff', cohort: 'staff', value: true }, change: 'added' },
        { path: 'rollout.value', before: true, after: true, change: 'same' },
        { path: 'rollout.schedule[0].at', before: 'd0', after: 'd0', change: 'same' },
        { path: 'rollout.schedule[0].percent', before: 1, after: 1, change: 'same' },
        { path: 'rollout.schedule[1].at', before: 'd1', after: 'd1', change: 'same' },
        { path: 'rollout.schedule[1].percent', before: 2, after: 5, change: 'changed' },
        { path: 'owner', before: 'payments', after: undefined, change: 'removed' },
        { path: 'description', before: undefined, after: 'new', change: 'added' },
    ]);
});

test('equal arrays stay one row', () => {
    assert.deepEqual(diffMembers({ include: ['a', 'b'] }, { include: ['a', 'b'] }),
        [{ path: 'include', before: ['a', 'b'], after: ['a', 'b'], change: 'same' }]);
});

test('an item missing on one side shows each member added or removed, whole', () => {
    assert.deepEqual(diffMembers(null, { type: 'int', rules: [{ name: 'qa' }] }), [
        { path: 'type', before: undefined, after: 'int', change: 'added' },
        { path: 'rules', before: undefined, after: [{ name: 'qa' }], change: 'added' },
    ]);
    assert.deepEqual(diffMembers({ include: ['u-1'] }, null),
        [{ path: 'include', before: ['u-1'], after: undefined, change: 'removed' }]);
});

test('a member that changes shape is one changed row', () => {
    assert.deepEqual(diffMembers({ rollout: { percent: 5 } }, { rollout: null }),
        [{ path: 'rollout', before: { percent: 5 }, after: null, change: 'changed' }]);
});

test('changed top-level members for summaries', () => {
    assert.deepEqual(changedMembers(before, after), ['killed', 'rules', 'rollout', 'owner', 'description']);
    assert.deepEqual(changedMembers(before, before), []);
    assert.equal(jsonText(undefined), '');
    assert.equal(jsonText({ a: [1] }), '{"a":[1]}');
});
