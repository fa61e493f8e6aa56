import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
    countText, dayKeys, evaluationsText, sdkLines, seriesSummary, usageModel, utcDay, variantsText,
} from '../../Sources/FlagServer/Dashboard/usage.js';

const now = Date.parse('2026-12-02T10:00:00Z');

// docs/telemetry.md's example, with a second day and a flag never evaluated.
const answer = {
    set: 'demo', days: 30,
    flags: [
        { key: 'new-checkout', lastEvaluated: '2026-12-02T10:00:00Z', days: [
            { day: '2026-11-30', evaluations: 10, variants: { on: 4, off: 6 } },
            { day: '2026-12-02', evaluations: 1234, variants: { on: 1000, off: 234 } },
        ] },
        { key: 'dark-mode', lastEvaluated: null, days: [] },
    ],
    sdks: [{ name: 'FlagClient', version: '1.9.0', instances: 10 }, { name: 'FlagClient', version: '2.0.0', instances: 840 }],
};

test('days are UTC and the window ends today', () => {
    assert.equal(utcDay(Date.parse('2026-12-02T23:59:59Z')), '2026-12-02');
    assert.equal(utcDay(Date.parse('2026-12-03T00:00:00Z')), '2026-12-03');
    assert.deepEqual(dayKeys(now, 3), ['2026-11-30', '2026-12-01', '2026-12-02']);
    assert.deepEqual(dayKeys(Date.parse('2026-03-01T01:00:00Z'), 2), ['2026-02-28', '2026-03-01']);
    assert.equal(dayKeys(now, 30).length, 30);
    assert.equal(dayKeys(now, 30)[0], '2026-11-03');
});

test('each flag is a row with a count for every day, the missing ones 0', () => {
    const model = usageModel(answer, now);
    assert.equal(model.days, 30);
    assert.equal(model.dayKeys.at(-1), '2026-12-02');
    const row = model.flags.get('new-checkout');
    assert.equal(row.lastEvaluated, now);
    assert.equal(row.total, 1244);
    assert.equal(row.series.length, 30);
    assert.deepEqual(row.series.slice(-3), [10, 0, 1234]);
    assert.equal(row.series.slice(0, -3).reduce((a, b) => a + b, 0), 0);
    assert.deepEqual(row.variants, [{ name: 'on', count: 1004 }, { name: 'off', count: 240 }]);
    const never = model.flags.get('dark-mode');
    assert.deepEqual([never.lastEvaluated, never.total, never.variants], [null, 0, []]);
    assert.ok(never.series.every((count) => count === 0));
    assert.equal(model.flags.get('not-in-the-answer'), undefined);
});

test('active instances by SDK version, most first', () => {
    const model = usageModel(answer, now);
    assert.deepEqual(model.sdks.map((sdk) => sdk.version), ['2.0.0', '1.9.0']);
    assert.deepEqual(sdkLines(model.sdks), ['FlagClient 2.0.0: 840 instances', 'FlagClient 1.9.0: 10 instances']);
    assert.deepEqual(sdkLines([{ name: 'Web', version: '1', instances: 1 }]), ['Web 1: 1 instance']);
});

test('a day the server has already begun (its clock past the browser\'s midnight) ends the window', () => {
    const lateBrowser = Date.parse('2026-12-01T23:59:58Z');
    const model = usageModel(answer, lateBrowser);
    assert.equal(model.dayKeys.at(-1), '2026-12-02');
    assert.equal(model.flags.get('new-checkout').series.at(-1), 1234);
});

test('a day outside the window still counts in the total, not in the series', () => {
    const model = usageModel({ days: 2, flags: [{ key: 'f', lastEvaluated: null, days: [
        { day: '2026-11-01', evaluations: 5 }, { day: '2026-12-02', evaluations: 7 },
    ] }] }, now);
    assert.deepEqual(model.dayKeys, ['2026-12-01', '2026-12-02']);
    assert.deepEqual(model.flags.get('f').series, [0, 7]);
    assert.equal(model.flags.get('f').total, 12);
});

test('members of the wrong shape are skipped, never thrown on', () => {
    const model = usageModel({ days: 'x', flags: [null, { key: 3 }, { key: 'f', lastEvaluated: 'yesterday', days: [
        null, { day: 'today', evaluations: 9 }, { day: '2026-12-02', evaluations: -4, variants: { on: 'many', off: 2 } },
        { day: '2026-12-02', evaluations: 3 },
    ] }], sdks: [{ name: 'x' }, 7] }, now, 7);
    assert.equal(model.days, 7);
    assert.deepEqual([...model.flags.keys()], ['f']);
    const row = model.flags.get('f');
    assert.equal(row.lastEvaluated, null);
    assert.equal(row.total, 12, 'the day that is no day counts in the total, a negative count as 0');
    assert.equal(row.series.at(-1), 3);
    assert.deepEqual(row.variants, [{ name: 'off', count: 2 }, { name: 'on', count: 0 }]);
    assert.deepEqual(model.sdks, []);
    assert.deepEqual(usageModel(null, now).flags.size, 0);
});

test('counts, evaluations and variants read the same in every locale', () => {
    assert.equal(countText(0), '0');
    assert.equal(countText(999), '999');
    assert.equal(countText(1234567), '1,234,567');
    assert.equal(evaluationsText(1, 30), '1 evaluation in 30 days');
    assert.equal(evaluationsText(1244, 30), '1,244 evaluations in 30 days');
    assert.equal(variantsText([{ name: 'on', count: 1004 }, { name: '', count: 3 }]), 'on 1,004 · (no variant) 3');
});

test('the sparkline\'s sentence names the total and the busiest day', () => {
    const model = usageModel(answer, now);
    assert.equal(seriesSummary(model.flags.get('new-checkout'), model.dayKeys),
        'Evaluations per day, last 30 days: 1,244 in all, most on 2026-12-02 (1,234).');
    assert.equal(seriesSummary(model.flags.get('dark-mode'), model.dayKeys), 'Evaluations per day, last 30 days: none.');
    assert.equal(seriesSummary(undefined, model.dayKeys), 'Evaluations per day, last 30 days: none.');
    const early = usageModel({ days: 2, flags: [{ key: 'f', days: [{ day: '2026-11-01', evaluations: 5 }] }] }, now);
    assert.equal(seriesSummary(early.flags.get('f'), early.dayKeys), 'Evaluations per day, last 2 days: 5 in all.',
        'no busiest day among the days shown');
});
