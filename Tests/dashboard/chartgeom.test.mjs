import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chartDomain, dayTicks, projectedSteps, rolloutChart, stepLine } from '../../Sources/FlagServer/Dashboard/chartgeom.js';
import { pausedAtMillis, percentAt, scheduleSteps } from '../../Sources/FlagServer/Dashboard/flagmodel.js';

const DAY = 86_400_000;
const start = Date.parse('2026-11-26T00:00:00Z');
const iso = (t) => new Date(t).toISOString();
const apple = { value: true, schedule: [1, 2, 5, 10, 20, 50, 100].map((percent, day) => ({ at: iso(start + day * DAY), percent })) };
const read = (rollout) => typeof rollout.percent === 'number'
    ? { percent: rollout.percent }
    : { steps: scheduleSteps(rollout), pausedAt: pausedAtMillis(rollout) };
// A 700×100 plot with no margins over days -0.5 … 6.5: one day is 100 units, one percent one unit.
const frame = { width: 700, height: 100, left: 0, right: 0, top: 0, bottom: 0, from: start - 0.5 * DAY, to: start + 6.5 * DAY };

test('a step line goes flat to each step, then straight to its percent', () => {
    const steps = [{ at: 10, percent: 5 }, { at: 20, percent: 50 }];
    assert.deepEqual(stepLine(steps, 0, 30), [
        { t: 0, p: 0 }, { t: 10, p: 0 }, { t: 10, p: 5 }, { t: 20, p: 5 }, { t: 20, p: 50 }, { t: 30, p: 50 },
    ]);
    assert.deepEqual(stepLine(steps, 15, 30), [{ t: 15, p: 5 }, { t: 20, p: 5 }, { t: 20, p: 50 }, { t: 30, p: 50 }],
        'a step before the start sets the first percent');
    assert.deepEqual(stepLine([], 0, 5, 7), [{ t: 0, p: 7 }, { t: 5, p: 7 }]);
});

test('the Apple schedule in SVG coordinates, now at day 3.5', () => {
    const now = start + 3.5 * DAY;
    const chart = rolloutChart(read(apple), now, frame);
    assert.deepEqual(chart.now, { x: 400, y: 90, percent: 10 });
    assert.equal(chart.now.percent, percentAt(apple, now), 'the marker agrees with the evaluation percent');
    const done = chart.series.find((line) => line.kind === 'done');
    assert.deepEqual(done.points, [
        { x: 0, y: 100 }, { x: 50, y: 100 }, { x: 50, y: 99 }, { x: 150, y: 99 }, { x: 150, y: 98 },
        { x: 250, y: 98 }, { x: 250, y: 95 }, { x: 350, y: 95 }, { x: 350, y: 90 }, { x: 400, y: 90 },
    ]);
    assert.equal(done.path, 'M0 100 L50 100 L50 99 L150 99 L150 98 L250 98 L250 95 L350 95 L350 90 L400 90');
    const planned = chart.series.find((line) => line.kind === 'planned');
    assert.deepEqual(planned.points[0], { x: 400, y: 90 });
    assert.deepEqual(planned.points.at(-1), { x: 700, y: 0 });
    assert.equal(chart.paused, null);
    assert.deepEqual(chart.yTicks.map((tick) => tick.y), [100, 75, 50, 25, 0]);
    assert.deepEqual(chart.xTicks.map((tick) => tick.x), [50, 150, 250, 350, 450, 550, 650]);
});

test('a paused schedule: flat from the pause to now, the rest moved later by the pause', () => {
    const rollout = { ...apple, pausedAt: iso(start + 2.5 * DAY) };
    const now = start + 3.5 * DAY;
    const chart = rolloutChart(read(rollout), now, frame);
    assert.deepEqual(chart.paused, { x: 300, y: 95, percent: 5 });
    assert.deepEqual(chart.now, { x: 400, y: 95, percent: 5 });
    const paused = chart.series.find((line) => line.kind === 'paused');
    assert.deepEqual(paused.points, [{ x: 300, y: 95 }, { x: 400, y: 95 }]);
    const planned = chart.series.find((line) => line.kind === 'planned');
    // 10 % was due at day 3; a day of pause moves it to day 4 (x = 450).
    assert.deepEqual(planned.points.slice(0, 3), [{ x: 400, y: 95 }, { x: 450, y: 95 }, { x: 450, y: 90 }]);
    assert.deepEqual(projectedSteps(read(rollout), now).map((step) => (step.at - start) / DAY), [4, 5, 6, 7]);
});

test('a fixed percent is a flat line', () => {
    const now = start;
    const chart = rolloutChart(read({ percent: 30, value: true }), now, { width: 600, height: 100, left: 0, right: 0, top: 0, bottom: 0 });
    assert.deepEqual(chart.domain, { from: now - 3 * DAY, to: now + 3 * DAY });
    assert.deepEqual(chart.now, { x: 300, y: 70, percent: 30 });
    const ys = chart.series.flatMap((line) => line.points.map((point) => point.y));
    assert.ok(ys.every((y) => y === 70));
});

test('times and percents outside the frame are clamped to its edges', () => {
    const late = start + 20 * DAY;
    const chart = rolloutChart(read(apple), late, frame);
    assert.deepEqual(chart.now, { x: 700, y: 0, percent: 100 });
    const early = rolloutChart(read(apple), start - 5 * DAY, frame);
    assert.deepEqual(early.now, { x: 0, y: 100, percent: 0 });
    const over = rolloutChart({ percent: 250 }, start, frame);
    assert.equal(over.now.y, 0);
});

test('the default domain holds every step and now, with a margin', () => {
    const steps = scheduleSteps(apple);
    const domain = chartDomain({ steps, pausedAt: null }, start + 10 * DAY);
    assert.ok(domain.from < start && domain.to > start + 10 * DAY);
    const chart = rolloutChart({ steps, pausedAt: null }, start + 3.5 * DAY);
    for (const line of chart.series) {
        for (const point of line.points) {
            assert.ok(point.x >= chart.plot.left && point.x <= chart.plot.right);
            assert.ok(point.y >= chart.plot.top && point.y <= chart.plot.bottom);
        }
    }
});

test('scheduled changes are marks at their times, inside the domain', () => {
    const steps = scheduleSteps(apple);
    const later = steps[steps.length - 1].at + 20 * DAY;
    const chart = rolloutChart({ steps, pausedAt: null }, start + DAY, { marks: [{ at: start + 2 * DAY, id: 3 }, { at: later, id: 4 }] });
    assert.deepEqual(chart.marks.map((mark) => mark.id), [3, 4]);
    assert.ok(chart.domain.to > later, 'a change after the last step widens the domain');
    const [early, late] = chart.marks;
    assert.ok(early.x > chart.now.x && late.x > early.x && late.x < chart.plot.right);
    // A fixed percent shows three days either side of now, and further when a change applies later.
    const now = start;
    assert.deepEqual(chartDomain({ percent: 30 }, now), { from: now - 3 * DAY, to: now + 3 * DAY });
    assert.ok(chartDomain({ percent: 30 }, now, [now + 9 * DAY]).to > now + 9 * DAY);
    assert.deepEqual(rolloutChart({ percent: 30 }, now).marks, []);
});

test('day ticks are UTC midnights, spaced to at most seven', () => {
    assert.deepEqual(dayTicks(start - 0.5 * DAY, start + 2.5 * DAY), [start, start + DAY, start + 2 * DAY]);
    const many = dayTicks(start, start + 30 * DAY);
    assert.ok(many.length <= 7 + 1);
    assert.equal(many[1] - many[0], 5 * DAY);
});

test('the number of day ticks can be limited for a narrow chart', () => {
    const chart = rolloutChart(read(apple), start + 3.5 * DAY, { ...frame, maxTicks: 4 });
    assert.deepEqual(chart.xTicks.map((tick) => tick.x), [50, 250, 450, 650]);
});
