// How a set's usage reads for people: `GET /v1/admin/sets/{set}/usage?days=N` (docs/telemetry.md, "The admin
// API") as one row per flag, with a count for every day of the window, for the flags list and the flag screen.
// Pure: no DOM, no clock; callers pass `now` in milliseconds. This module imports nothing, so that node's test
// runner loads it as it is; the browser loads it as /ui/usage.js.

const DAY = 86_400_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** `2026-12-02`: the UTC day of a time in milliseconds, as the server names days. */
export function utcDay(ms) {
    return new Date(Math.floor(ms / DAY) * DAY).toISOString().slice(0, 10);
}

/** The `days` UTC days that end with the one of `last` (milliseconds), oldest first, as `YYYY-MM-DD`. */
export function dayKeys(last, days) {
    const end = Math.floor(last / DAY) * DAY;
    const keys = [];
    for (let index = days - 1; index >= 0; index -= 1) keys.push(utcDay(end - index * DAY));
    return keys;
}

function nonNegative(value) {
    return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

function millis(text) {
    const t = typeof text === 'string' ? Date.parse(text) : NaN;
    return Number.isFinite(t) ? t : null;
}

/**
 * The usage answer as `{days, dayKeys, flags, sdks}`:
 * - `days`: the window in days (the answer's, else `fallbackDays`); `dayKeys`: its days, oldest first, ending with
 *   today, or with the answer's last day when the server's clock is already past the browser's midnight;
 * - `flags`: a Map from each flag key to `{key, lastEvaluated, total, series, variants}`: `lastEvaluated` in
 *   milliseconds or null (not evaluated in the window), `total` the evaluations in the window, `series` one count
 *   per day of `dayKeys` (0 for the days the server leaves out), `variants` `[{name, count}]` most served first
 *   (`""` is the variant of a flag without variants);
 * - `sdks`: `[{name, version, instances}]`, the active instances by SDK version, most first.
 * Members of the wrong shape are skipped; the answer comes from the server, but the page must not break on a newer
 * one.
 */
export function usageModel(answer, now, fallbackDays = 30) {
    const body = answer && typeof answer === 'object' ? answer : {};
    const days = Number.isInteger(body.days) && body.days > 0 ? body.days : fallbackDays;
    const entries = Array.isArray(body.flags) ? body.flags.filter((flag) => flag && typeof flag.key === 'string') : [];
    let last = now;
    for (const flag of entries) {
        for (const day of Array.isArray(flag.days) ? flag.days : []) {
            const t = day && typeof day.day === 'string' && DAY_PATTERN.test(day.day) ? Date.parse(`${day.day}T00:00:00Z`) : NaN;
            if (Number.isFinite(t) && t > last) last = t;
        }
    }
    const keys = dayKeys(last, days);
    const index = new Map(keys.map((key, i) => [key, i]));
    const flags = new Map();
    for (const flag of entries) {
        const series = keys.map(() => 0);
        const variants = new Map();
        let total = 0;
        for (const day of Array.isArray(flag.days) ? flag.days : []) {
            if (!day || typeof day !== 'object') continue;
            const evaluations = nonNegative(day.evaluations);
            total += evaluations;
            if (index.has(day.day)) series[index.get(day.day)] += evaluations;
            if (day.variants && typeof day.variants === 'object') {
                for (const [name, count] of Object.entries(day.variants)) {
                    variants.set(name, (variants.get(name) ?? 0) + nonNegative(count));
                }
            }
        }
        flags.set(flag.key, {
            key: flag.key,
            lastEvaluated: millis(flag.lastEvaluated),
            total,
            series,
            variants: [...variants].map(([name, count]) => ({ name, count }))
                .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        });
    }
    const sdks = (Array.isArray(body.sdks) ? body.sdks : [])
        .filter((sdk) => sdk && typeof sdk.name === 'string' && typeof sdk.version === 'string')
        .map((sdk) => ({ name: sdk.name, version: sdk.version, instances: nonNegative(sdk.instances) }))
        .sort((a, b) => b.instances - a.instances);
    return { days, dayKeys: keys, flags, sdks };
}

/** `1,234,567`: a count with thousands separated, the same in every browser's locale. */
export function countText(count) {
    return String(Math.round(nonNegative(count))).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `1 evaluation` / `1,234 evaluations in 30 days`. */
export function evaluationsText(total, days) {
    const counted = `${countText(total)} evaluation${total === 1 ? '' : 's'}`;
    return days ? `${counted} in ${days} day${days === 1 ? '' : 's'}` : counted;
}

/** `on 1,000 · off 234`; the variant of a flag without variants reads `(no variant)`. */
export function variantsText(variants) {
    return variants.map((variant) => `${variant.name === '' ? '(no variant)' : variant.name} ${countText(variant.count)}`).join(' · ');
}

/**
 * One sentence for screen readers and the tooltip: what the sparkline of `row` shows, e.g.
 * `Evaluations per day, last 30 days: 1,234 in all, most on 2026-12-02 (1,000).`
 */
export function seriesSummary(row, dayKeys) {
    const days = dayKeys.length;
    if (!row || row.total === 0) return `Evaluations per day, last ${days} days: none.`;
    let peak = 0;
    for (let i = 1; i < row.series.length; i += 1) if (row.series[i] > row.series[peak]) peak = i;
    if (!row.series[peak]) return `Evaluations per day, last ${days} days: ${countText(row.total)} in all.`;
    return `Evaluations per day, last ${days} days: ${countText(row.total)} in all, `
        + `most on ${dayKeys[peak]} (${countText(row.series[peak])}).`;
}

/** `FlagClient 2.0.0: 840 instances`, one per SDK version. */
export function sdkLines(sdks) {
    return sdks.map((sdk) => `${sdk.name} ${sdk.version}: ${countText(sdk.instances)} instance${sdk.instances === 1 ? '' : 's'}`);
}
