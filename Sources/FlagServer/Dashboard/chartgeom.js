// Geometry of the rollout chart: percent over time as a step line in SVG coordinates. Pure: no DOM, no clock.
//
// Input is a rollout already read by flagmodel.js: `{percent}` for a fixed percent, or `{steps: [{at, percent}],
// pausedAt}` with times in milliseconds, steps sorted (flagmodel.scheduleSteps, flagmodel.pausedAtMillis).

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Default size and margins, in SVG user units (the SVG scales to its box through `viewBox`). */
export const DEFAULT_SIZE = { width: 640, height: 220, left: 44, right: 16, top: 14, bottom: 30 };

function round(value) {
    return Math.round(value * 100) / 100;
}

function clamp(value, low, high) {
    return Math.min(high, Math.max(low, value));
}

/**
 * The step line of `steps` between `from` and `to` as `(t, percent)` points, starting at `initial` percent:
 * flat until each step's time, then straight up (or down) to its percent.
 */
export function stepLine(steps, from, to, initial = 0) {
    let percent = initial;
    const points = [{ t: from, p: percent }];
    for (const step of steps) {
        if (step.at <= from) {
            percent = step.percent;
            points[0].p = percent;
        } else if (step.at < to) {
            points.push({ t: step.at, p: percent });
            percent = step.percent;
            points.push({ t: step.at, p: percent });
        }
    }
    points.push({ t: to, p: percent });
    return points;
}

/**
 * The time span the chart shows: every step, now, the pause and the `marks` (times in ms), plus a margin on both
 * sides; three days either side of now for a fixed percent.
 */
export function chartDomain(rollout, now, marks = []) {
    const fixed = typeof rollout.percent === 'number' || !rollout.steps || rollout.steps.length === 0;
    const times = fixed ? [now - 3 * DAY, now + 3 * DAY, ...marks] : [now, ...rollout.steps.map((step) => step.at), ...marks];
    if (fixed) return { from: Math.min(...times), to: Math.max(...times) + (marks.length ? HOUR : 0) };
    if (rollout.pausedAt !== null && rollout.pausedAt !== undefined) {
        times.push(rollout.pausedAt);
        for (const step of projectedSteps(rollout, now)) times.push(step.at);
    }
    const low = Math.min(...times);
    const high = Math.max(...times);
    const margin = Math.max(HOUR, (high - low) * 0.06);
    return { from: low - margin, to: high + margin };
}

/** The steps a paused schedule still has ahead, moved later by the pause so far: where they land if resumed now. */
export function projectedSteps(rollout, now) {
    const paused = rollout.pausedAt;
    if (paused === null || paused === undefined) return [];
    const shift = Math.max(0, now - paused);
    return rollout.steps.filter((step) => step.at > paused).map((step) => ({ at: step.at + shift, percent: step.percent }));
}

/** UTC midnights inside the domain, a whole number of days apart, at most `max` of them. */
export function dayTicks(from, to, max = 7) {
    const spanDays = Math.max(1, (to - from) / DAY);
    const every = Math.max(1, Math.ceil(spanDays / max));
    const ticks = [];
    for (let t = Math.ceil(from / DAY) * DAY; t <= to; t += every * DAY) ticks.push(t);
    return ticks;
}

/**
 * Everything the chart draws, in SVG coordinates:
 * - `series`: `{kind, points, path}` with kind `done` (up to now), `planned` (after now, or after a pause: the
 *   remaining steps as if resumed now) and `paused` (flat from `pausedAt` to now);
 * - `now`: `{x, y, percent}`; `paused`: `{x, y, percent}` or null;
 * - `yTicks` (0, 25, 50, 75, 100 %) and `xTicks` (`{x, t}`, UTC midnights), `plot` (the drawing area), `domain`.
 * - `marks`: `{x, at, ...}` for each of `options.marks` (`{at, ...}`, `at` in ms), the scheduled changes of the
 *   flag, which the domain includes.
 * Times outside the domain and percents outside 0–100 are clamped to the plot's edges. `options` may change the
 * size (DEFAULT_SIZE's members), the domain (`from`, `to`) and the number of day ticks (`maxTicks`, 7).
 */
export function rolloutChart(rollout, now, options = {}) {
    const size = { ...DEFAULT_SIZE, ...options };
    const marks = options.marks ?? [];
    const domain = options.from !== undefined && options.to !== undefined
        ? { from: options.from, to: options.to }
        : chartDomain(rollout, now, marks.map((mark) => mark.at));
    const plot = { left: size.left, right: size.width - size.right, top: size.top, bottom: size.height - size.bottom };
    const span = Math.max(1, domain.to - domain.from);
    const x = (t) => round(plot.left + ((clamp(t, domain.from, domain.to) - domain.from) / span) * (plot.right - plot.left));
    const y = (p) => round(plot.bottom - (clamp(p, 0, 100) / 100) * (plot.bottom - plot.top));
    const nowT = clamp(now, domain.from, domain.to);

    const lines = [];
    let nowPercent;
    let paused = null;
    if (typeof rollout.percent === 'number') {
        nowPercent = clamp(rollout.percent, 0, 100);
        lines.push({ kind: 'done', points: [{ t: domain.from, p: nowPercent }, { t: nowT, p: nowPercent }] });
        lines.push({ kind: 'planned', points: [{ t: nowT, p: nowPercent }, { t: domain.to, p: nowPercent }] });
    } else {
        const steps = rollout.steps || [];
        const pausedAt = rollout.pausedAt;
        if (pausedAt !== null && pausedAt !== undefined && pausedAt <= now) {
            const pauseT = clamp(pausedAt, domain.from, domain.to);
            const done = stepLine(steps, domain.from, pauseT);
            nowPercent = done[done.length - 1].p;
            paused = { t: pauseT, p: nowPercent };
            lines.push({ kind: 'done', points: done });
            lines.push({ kind: 'paused', points: [{ t: pauseT, p: nowPercent }, { t: nowT, p: nowPercent }] });
            lines.push({ kind: 'planned', points: stepLine(projectedSteps(rollout, now), nowT, domain.to, nowPercent) });
        } else {
            const done = stepLine(steps, domain.from, nowT);
            nowPercent = done[done.length - 1].p;
            lines.push({ kind: 'done', points: done });
            lines.push({ kind: 'planned', points: stepLine(steps, nowT, domain.to, nowPercent) });
        }
    }

    const series = lines.map((line) => {
        const points = line.points.map((point) => ({ x: x(point.t), y: y(point.p) }));
        const path = points.map((point, i) => `${i === 0 ? 'M' : 'L'}${point.x} ${point.y}`).join(' ');
        return { kind: line.kind, points, path };
    });
    return {
        width: size.width,
        height: size.height,
        plot,
        domain,
        series,
        now: { x: x(now), y: y(nowPercent), percent: nowPercent },
        paused: paused && { x: x(paused.t), y: y(paused.p), percent: paused.p },
        yTicks: [0, 25, 50, 75, 100].map((p) => ({ y: y(p), percent: p })),
        xTicks: dayTicks(domain.from, domain.to, size.maxTicks ?? 7).map((t) => ({ x: x(t), t })),
        marks: marks.map((mark) => ({ ...mark, x: x(mark.at) })),
    };
}
