import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
    createPropagationPoller, laggingRows, millisecondsText, outcomeText, POLL_INTERVAL_MS, POLL_TIMEOUT_MS,
    propagationOutcome, propagationSummary, readPropagation, secondsText, seenText, shareText, silentText,
} from '../../Sources/FlagServer/Dashboard/propagation.js';

// docs/telemetry.md's example answer.
const example = {
    set: 'demo', version: 41, active: 850, applied: 842, p50Ms: 1840, p99Ms: 2950,
    written: { streams: 850, ms: 12.4 }, silent: 3,
    lagging: [{ id: 'in_a', sdk: { name: 'FlagClient', version: '1.9.0' }, app: null, version: 40, lastSeen: '2026-12-02T10:00:01Z' }],
};
const now = Date.parse('2026-12-02T10:00:05Z');

test('the summary reads as flagctl --wait prints it', () => {
    const propagation = readPropagation(example);
    assert.equal(propagationSummary(propagation), 'written to 850 streams in 12 ms; applied by 842 of 850 instances');
    assert.equal(propagationSummary(readPropagation({ ...example, written: { streams: 1, ms: 0.44 }, active: 1, applied: 0 })),
        'written to 1 stream in 0.4 ms; applied by 0 of 1 instance');
    assert.equal(propagationSummary(readPropagation({ ...example, written: null })), 'applied by 842 of 850 instances',
        'another server wrote it: only what the clients report');
});

test('figures for people: milliseconds, seconds cut to a tenth, shares that never round up to 100%', () => {
    assert.deepEqual([millisecondsText(12.4), millisecondsText(9.96), millisecondsText(0.44)], ['12 ms', '10 ms', '0.4 ms']);
    assert.deepEqual([secondsText(1840), secondsText(1999), secondsText(30_000), secondsText(-5)], ['1.8 s', '1.9 s', '30.0 s', '0.0 s']);
    assert.deepEqual([shareText(842, 850), shareText(999, 1000), shareText(1, 1), shareText(0, 0)], ['99%', '99.9%', '100%', '0%']);
    assert.equal(shareText(9999, 10000), '99.9%');
});

test('a wait is confirmed when every active instance applied it, over when nobody is active or time is up', () => {
    const waiting = readPropagation(example);
    assert.equal(propagationOutcome(waiting, 1_000), 'waiting');
    assert.equal(propagationOutcome(waiting, POLL_TIMEOUT_MS), 'timeout');
    assert.equal(propagationOutcome(readPropagation({ ...example, applied: 850, lagging: [] }), 40_000), 'confirmed');
    assert.equal(propagationOutcome(readPropagation({ ...example, active: 0, applied: 0 }), 0), 'nobody');
});

test('each outcome has its sentence', () => {
    const waiting = readPropagation(example);
    assert.equal(outcomeText('waiting', waiting, 1250), 'Waiting for the clients to report v41… 1.2 s');
    assert.equal(outcomeText('timeout', waiting, 30_100),
        'Not confirmed within 30.0 s: 842 of 850 active instances (99%) report v41. The kill itself is written.');
    assert.equal(outcomeText('confirmed', readPropagation({ ...example, applied: 850 }), 2000),
        'Confirmed: every active instance reports v41 or later; from commit to report p50 1.8 s, p99 2.9 s (server clock).');
    assert.equal(outcomeText('confirmed', readPropagation({ ...example, applied: 850, p50Ms: null, p99Ms: null }), 2000),
        'Confirmed: every active instance reports v41 or later.');
    assert.equal(outcomeText('nobody', readPropagation({ ...example, active: 0 }), 0),
        'No instance reported in the last 5 minutes: nobody to wait for (v41).');
});

test('lagging instances, and those the server did not list', () => {
    const { rows, unlisted } = laggingRows(readPropagation(example), now);
    assert.deepEqual(rows, [{ id: 'in_a', sdk: 'FlagClient 1.9.0', app: '—', version: 'v40', lastSeen: '10:00:01 UTC (4 s ago)' }]);
    assert.equal(unlisted, 7, '850 active, 842 applied, 1 listed');
    const fresh = readPropagation({ active: 2, applied: 0, lagging: [
        { id: 'in_b', sdk: { name: 'FlagClient', version: '2.0.0' }, app: { name: 'Shop', version: '5.3.0' }, version: null, lastSeen: '2026-12-02T09:55:00Z' },
        { id: 'in_c', sdk: 'odd', lastSeen: 'never' },
    ] });
    assert.deepEqual(laggingRows(fresh, now).rows, [
        { id: 'in_b', sdk: 'FlagClient 2.0.0', app: 'Shop 5.3.0', version: 'none yet', lastSeen: '09:55:00 UTC (5 min ago)' },
        { id: 'in_c', sdk: '—', app: '—', version: 'none yet', lastSeen: '—' },
    ]);
    assert.equal(seenText(now + 3000, now), '10:00:08 UTC', 'a time ahead of this clock has no "ago"');
});

test('connections that do not report are named, never left out', () => {
    assert.equal(silentText(0), '');
    assert.equal(silentText(1), '1 connection does not report telemetry (SDKs from before it, or telemetry turned off): not counted above.');
    assert.match(silentText(3), /^3 connections do not report/);
});

test('an answer of the wrong shape reads as zeros, never throws', () => {
    assert.deepEqual(readPropagation(null), {
        version: 0, active: 0, applied: 0, p50Ms: null, p99Ms: null, written: null, silent: 0, lagging: [],
    });
    const odd = readPropagation({ active: -1, applied: 2.5, written: { streams: 'x', ms: -3 }, lagging: 'none' });
    assert.deepEqual([odd.active, odd.applied, odd.written, odd.lagging], [0, 0, { streams: 0, ms: 0 }, []]);
});

/** A poller on a fake clock: `answers` are given in turn (an Error is thrown instead of answered). */
function harness(answers, options = {}) {
    let clock = 0;
    const timers = [];
    const updates = [];
    const errors = [];
    let loads = 0;
    const poller = createPropagationPoller({
        load: async () => {
            const answer = answers[Math.min(loads, answers.length - 1)];
            loads += 1;
            if (answer instanceof Error) throw answer;
            return answer;
        },
        onUpdate: (update) => updates.push({ ...update, at: clock }),
        onError: (error, { final }) => errors.push({ status: error.status, final }),
        clock: () => clock,
        schedule: (fn, ms) => {
            const timer = { fn, at: clock + ms, cancelled: false };
            timers.push(timer);
            return timer;
        },
        cancel: (timer) => {
            timer.cancelled = true;
        },
        ...options,
    });
    return {
        poller, updates, errors,
        loads: () => loads,
        /** Lets the pending load settle. */
        settle: () => new Promise((resolve) => setImmediate(resolve)),
        /** Lets the pending load settle, then runs the next timer (moving the clock to it); false when none. */
        async step() {
            await new Promise((resolve) => setImmediate(resolve));
            const next = timers.shift();
            if (!next) return false;
            clock = next.at;
            if (!next.cancelled) next.fn();
            await new Promise((resolve) => setImmediate(resolve));
            return true;
        },
    };
}

const progress = (applied) => ({ ...example, active: 4, applied, written: { streams: 4, ms: 3 }, lagging: [] });

test('the poll asks every 500 ms and stops once every instance has applied the version', async () => {
    const run = harness([progress(0), progress(2), progress(4), progress(4)]);
    while (await run.step()) { /* until no timer is left */ }
    assert.deepEqual(run.updates.map((update) => [update.at, update.propagation.applied, update.outcome]),
        [[0, 0, 'waiting'], [500, 2, 'waiting'], [1000, 4, 'confirmed']]);
    assert.equal(run.loads(), 3);
    assert.equal(run.poller.stopped, true);
    assert.equal(POLL_INTERVAL_MS, 500);
});

test('the poll gives up after 30 s, with the lagging figures of its last answer', async () => {
    const run = harness([progress(3)]);
    while (await run.step()) { /* until no timer is left */ }
    assert.equal(run.updates.length, 61, 'at 0, 0.5, … 30 s');
    assert.deepEqual(run.updates.at(-2).outcome, 'waiting');
    assert.deepEqual([run.updates.at(-1).at, run.updates.at(-1).outcome], [30_000, 'timeout']);
});

test('nobody active ends the poll at the first answer', async () => {
    const run = harness([{ ...example, active: 0, applied: 0, lagging: [] }]);
    while (await run.step()) { /* until no timer is left */ }
    assert.deepEqual(run.updates.map((update) => update.outcome), ['nobody']);
});

test('a refused request stops the poll; a failed one is retried', async () => {
    const failed = Object.assign(new Error('overloaded'), { status: 503 });
    const refused = Object.assign(new Error('no version 99'), { status: 404 });
    const retried = harness([failed, progress(4)]);
    while (await retried.step()) { /* until no timer is left */ }
    assert.deepEqual(retried.errors, [{ status: 503, final: false }]);
    assert.deepEqual(retried.updates.map((update) => update.outcome), ['confirmed']);
    const stopped = harness([refused, progress(4)]);
    while (await stopped.step()) { /* until no timer is left */ }
    assert.deepEqual(stopped.errors, [{ status: 404, final: true }]);
    assert.deepEqual(stopped.updates, []);
    assert.equal(stopped.loads(), 1);
});

test('stop() ends the poll, even with an answer on its way', async () => {
    const run = harness([progress(1)]);
    run.poller.stop();
    while (await run.step()) { /* until no timer is left */ }
    assert.deepEqual(run.updates, [], 'the answer that was on its way is not shown');
    const later = harness([progress(1)]);
    await later.settle();
    assert.equal(later.updates.length, 1);
    later.poller.stop();
    while (await later.step()) { /* until no timer is left */ }
    assert.equal(later.updates.length, 1);
    assert.equal(later.loads(), 1, 'the scheduled poll was cancelled');
});
