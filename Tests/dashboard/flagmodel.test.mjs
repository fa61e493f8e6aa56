import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
    dependentsOf, enumChoices, filterFlags, flagStates, indexFlag, kinds, matches, normalizeFilter, owners, percentAt,
    prerequisitesAndRules, primaryState, QUIET_STATE, rolloutPhase, scheduleSteps,
} from '../../Sources/FlagServer/Dashboard/flagmodel.js';

const DAY = 86_400_000;
const start = Date.parse('2026-11-26T09:00:00Z');
const iso = (t) => new Date(t).toISOString();
const apple = {
    value: true,
    schedule: [1, 2, 5, 10, 20, 50, 100].map((percent, day) => ({ at: iso(start + day * DAY), percent })),
};

test('the percent of a phased schedule is the last step at or before the time', () => {
    assert.equal(percentAt(apple, start + 3.5 * DAY), 10);
    assert.equal(percentAt(apple, start + 3 * DAY), 10, 'a step applies from its own time');
    assert.equal(percentAt(apple, start + 3 * DAY - 1), 5);
    assert.equal(percentAt(apple, start - 1), 0, '0 before the first step');
    assert.equal(percentAt(apple, start), 1);
    assert.equal(percentAt(apple, start + 30 * DAY), 100);
});

test('a paused schedule stays at its percent at pausedAt', () => {
    const paused = { ...apple, pausedAt: iso(start + 2.5 * DAY) };
    assert.equal(percentAt(paused, start + 5 * DAY), 5);
    assert.equal(percentAt(paused, start + 60 * DAY), 5);
    assert.equal(percentAt(paused, start + 1.5 * DAY), 2, 'before the pause it is the schedule');
});

test('a fixed percent is the same at every time; no rollout is null', () => {
    assert.equal(percentAt({ value: true, percent: 30 }, 0), 30);
    assert.equal(percentAt({ value: true, percent: 30 }, start + 400 * DAY), 30);
    assert.equal(percentAt({ value: true, percent: 130 }, 0), 100, 'clamped');
    assert.equal(percentAt(undefined, 0), null);
    assert.equal(percentAt(null, 0), null);
});

test('unsorted schedules are read by time', () => {
    const rollout = { schedule: [{ at: iso(start + DAY), percent: 50 }, { at: iso(start), percent: 10 }] };
    assert.deepEqual(scheduleSteps(rollout).map((step) => step.percent), [10, 50]);
    assert.equal(percentAt(rollout, start + 0.5 * DAY), 10);
});

test('rollout phases', () => {
    assert.equal(rolloutPhase(undefined, start), 'none');
    assert.equal(rolloutPhase(apple, start + 3.5 * DAY), 'rolling out');
    assert.equal(rolloutPhase(apple, start - DAY), 'rolling out', 'scheduled, not started');
    assert.equal(rolloutPhase(apple, start + 7 * DAY), 'complete');
    assert.equal(rolloutPhase({ ...apple, pausedAt: iso(start) }, start + DAY), 'paused');
    assert.equal(rolloutPhase({ percent: 100, value: true }, start), 'complete');
    assert.equal(rolloutPhase({ percent: 40, value: true }, start), 'rolling out');
    const held = { schedule: [{ at: iso(start), percent: 50 }] };
    assert.equal(rolloutPhase(held, start + DAY), 'rolling out', 'held below 100 % with nothing ahead');
});

const now = Date.parse('2026-11-29T10:00:00Z');

test('the badge follows evaluation order', () => {
    assert.equal(primaryState({ killed: true, expiresAt: '2026-01-01T00:00:00Z', rollout: apple }, now), 'killed');
    assert.equal(primaryState({ archived: true, killed: true }, now), 'archived');
    assert.equal(primaryState({ expiresAt: '2026-11-26T10:00:00Z', rollout: apple }, now), 'expired');
    assert.equal(primaryState({ expiresAt: '2026-11-01T10:00:00Z' }, now), 'stale', 'expired 28 days ago');
    assert.equal(primaryState({ expiresAt: '2026-11-15T10:00:00Z' }, now), 'stale', 'expired exactly 14 days ago');
    assert.equal(primaryState({ expiresAt: '2026-11-15T10:00:01Z' }, now), 'expired');
    assert.equal(primaryState({ rollout: { ...apple, pausedAt: iso(start) } }, now), 'paused');
    assert.equal(primaryState({ rollout: apple, expiresAt: '2027-01-10T00:00:00Z' }, now), 'rolling out');
    assert.equal(primaryState({ rollout: { percent: 100, value: true } }, now), QUIET_STATE);
    assert.equal(primaryState({ default: false }, now), 'default');
});

test('a flag lists every state that applies', () => {
    assert.deepEqual(flagStates({ killed: true, expiresAt: '2026-01-01T00:00:00Z' }, now), ['killed', 'stale', 'expired']);
    assert.deepEqual(flagStates({ expiresAt: '2026-11-28T00:00:00Z', rollout: { percent: 5 } }, now),
        ['expired', 'rolling out']);
    assert.deepEqual(flagStates({ archived: true, expiresAt: '2026-01-01T00:00:00Z' }, now), ['archived']);
});

const flags = {
    'new-checkout': { kind: 'release', owner: 'payments', description: 'Checkout v2: one-page checkout', rollout: apple },
    'checkout-button': { kind: 'experiment', owner: 'growth', description: 'Colour of the pay button' },
    'payments-enabled': { kind: 'kill-switch', owner: 'payments', description: 'Turn off to stop taking payments', killed: true },
    'dark-mode': { kind: 'release', owner: 'mobile', description: 'Dark mode', expiresAt: '2026-10-01T00:00:00Z' },
    'old-banner': { kind: 'release', owner: 'growth', description: 'Banner', archived: true },
    'ios-widgets': { kind: 'release', owner: 'mobile', description: 'Widgets', expiresAt: '2026-11-27T00:00:00Z' },
    custom: { kind: 'chore', description: 'no owner' },
};

test('search looks at key, description and owner, every term, any case', () => {
    assert.deepEqual(filterFlags(flags, { text: 'checkout' }, now), ['checkout-button', 'new-checkout']);
    assert.deepEqual(filterFlags(flags, { text: 'PAYMENTS' }, now), ['new-checkout', 'payments-enabled']);
    assert.deepEqual(filterFlags(flags, { text: 'pay button' }, now), ['checkout-button']);
    assert.deepEqual(filterFlags(flags, { text: '  ' }, now).length, 7);
    assert.deepEqual(filterFlags(flags, { text: 'nothing-like-this' }, now), []);
});

test('kind, state and owner filters combine with search', () => {
    assert.deepEqual(filterFlags(flags, { kind: 'release' }, now), ['dark-mode', 'ios-widgets', 'new-checkout', 'old-banner']);
    assert.deepEqual(filterFlags(flags, { state: 'killed' }, now), ['payments-enabled']);
    assert.deepEqual(filterFlags(flags, { state: 'expired' }, now), ['dark-mode', 'ios-widgets']);
    assert.deepEqual(filterFlags(flags, { state: 'stale' }, now), ['dark-mode']);
    assert.deepEqual(filterFlags(flags, { state: 'archived' }, now), ['old-banner']);
    assert.deepEqual(filterFlags(flags, { state: 'rolling out' }, now), ['new-checkout']);
    assert.deepEqual(filterFlags(flags, { owner: 'mobile', state: 'expired' }, now), ['dark-mode', 'ios-widgets']);
    assert.deepEqual(filterFlags(flags, { owner: 'payments', text: 'v2' }, now), ['new-checkout']);
    assert.deepEqual(filterFlags(flags, { kind: 'experiment', owner: 'payments' }, now), []);
});

test('an index entry is computed once and matched many times', () => {
    const entry = indexFlag('new-checkout', flags['new-checkout'], now);
    assert.equal(entry.owner, 'payments');
    assert.deepEqual(entry.states, ['rolling out']);
    assert.equal(matches(entry, normalizeFilter({ text: 'one-page' })), true);
    assert.equal(matches(entry, normalizeFilter({ text: 'one-page growth' })), false);
    assert.equal(indexFlag('x', null, now).haystack, 'x\n\n');
});

test('owners and kinds for the filter menus', () => {
    assert.deepEqual(owners(flags), ['growth', 'mobile', 'payments']);
    assert.deepEqual(kinds(flags), ['release', 'experiment', 'ops', 'kill-switch', 'permission', 'chore']);
});

const everyone = { name: 'everyone', conditions: [], value: true };
const wireRule = (...conditions) => ({ name: 'prerequisites', conditions, value: false });
const requires = (attribute, ...values) => ({ attribute, op: 'prerequisite', values });

test('prerequisites in the wire form are read from the first rule, which is not a rule', () => {
    const flag = {
        type: 'bool', default: false,
        rules: [wireRule(requires('new-checkout', 'true'), requires('theme', '"dark"', '"light"'), requires('limit', '3')), everyone],
    };
    assert.deepEqual(prerequisitesAndRules(flag), {
        prerequisites: [
            { flag: 'new-checkout', values: [true] },
            { flag: 'theme', values: ['dark', 'light'] },
            { flag: 'limit', values: [3] },
        ],
        rules: [everyone],
    });
});

test('prerequisites in the authoring form are read from the member, the rules as they are', () => {
    const flag = { prerequisites: [{ flag: 'new-checkout', values: [true] }, { flag: 'layout', values: [{ columns: 2 }] }], rules: [everyone] };
    assert.deepEqual(prerequisitesAndRules(flag), {
        prerequisites: [{ flag: 'new-checkout', values: [true] }, { flag: 'layout', values: [{ columns: 2 }] }],
        rules: [everyone],
    });
});

test('a wire value that is not JSON shows as its text', () => {
    const flag = { rules: [wireRule(requires('theme', '"dark', 'blue'))] };
    assert.deepEqual(prerequisitesAndRules(flag).prerequisites, [{ flag: 'theme', values: ['"dark', 'blue'] }]);
});

test('only a first rule named prerequisites of prerequisite conditions is the wire form', () => {
    const named = { name: 'prerequisites', conditions: [{ attribute: 'country', op: 'eq', values: ['DE'] }], value: true };
    const later = wireRule(requires('new-checkout', 'true'));
    for (const rules of [[named], [everyone, later], [{ ...later, name: 'beta' }], [wireRule()]]) {
        assert.deepEqual(prerequisitesAndRules({ rules }), { prerequisites: [], rules });
    }
    assert.deepEqual(prerequisitesAndRules({}), { prerequisites: [], rules: [] });
    assert.deepEqual(prerequisitesAndRules(null), { prerequisites: [], rules: [] });
});

test('the dependents of a flag are the flags that require it, in either form', () => {
    const set = {
        'express-checkout': { rules: [wireRule(requires('new-checkout', 'true')), everyone] },
        'one-click': { prerequisites: [{ flag: 'new-checkout', values: [true] }] },
        'new-checkout': { rules: [everyone] },
        'dark-mode': { rules: [wireRule(requires('theme', '"dark"'))] },
    };
    assert.deepEqual(dependentsOf(set, 'new-checkout'), ['express-checkout', 'one-click']);
    assert.deepEqual(dependentsOf(set, 'express-checkout'), []);
    assert.deepEqual(dependentsOf(undefined, 'x'), []);
});

test('an enum flag offers its values, in its order; any other flag none', () => {
    assert.deepEqual(enumChoices({ type: 'string', values: ['blue', 'green', 'dark mode'] }), ['blue', 'green', 'dark mode']);
    assert.equal(enumChoices({ type: 'string' }), null);
    assert.equal(enumChoices({ type: 'string', values: [] }), null);
    assert.equal(enumChoices({ type: 'json', values: ['a'] }), null);
    assert.equal(enumChoices(undefined), null);
});
