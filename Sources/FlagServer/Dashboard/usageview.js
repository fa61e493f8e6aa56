// How much a flag is used, from what clients report (docs/telemetry.md): when it was last evaluated and a sparkline
// of evaluations per day, as a cell of the flags list and as a card of the flag screen.

import { h, timeElement } from '/ui/dom.js';
import { sparklineElement } from '/ui/spark.js';
import { formatUTC, relativeTime } from '/ui/time.js';
import { evaluationsText, sdkLines, usageModel, variantsText } from '/ui/usage.js';

/** The window the dashboard shows, in days. */
export const USAGE_DAYS = 30;

/** Loads the set's usage (one flag's with `key`) as usage.js's model; throws ApiError. */
export async function loadUsage(api, set, key) {
    const answer = await api.get('usage', { set }, { key, days: USAGE_DAYS });
    return usageModel(answer.json, Date.now(), USAGE_DAYS);
}

/** `3 minutes ago` as a `<time>` with the UTC time as its tooltip, or `not in 30 days`. */
function lastEvaluated(row, days, now, testid) {
    if (!row || row.lastEvaluated === null) return h('span', { class: 'muted', testid, data: { never: 'true' } }, `not in ${days} days`);
    const iso = new Date(row.lastEvaluated).toISOString();
    return h('span', { testid, data: { at: iso } }, timeElement(iso, relativeTime(row.lastEvaluated, now), formatUTC(row.lastEvaluated)));
}

/**
 * The flags list's cell content for flag `key`: its sparkline and when it was last evaluated; only the latter for
 * a flag nobody evaluated in the window (a thousand flat lines would say less than the words).
 */
export function usageCellContent(model, key, now) {
    const row = model.flags.get(key);
    return [
        row && row.total > 0 ? sparklineElement(row, model.dayKeys) : null,
        h('span', { class: 'usage-last' }, lastEvaluated(row, model.days, now, 'last-evaluated')),
    ];
}

/**
 * The flag screen's usage card from `state`: `{status: 'loading'}`, `{status: 'ready', model}` or `{status:
 * 'failed', error}`.
 */
export function usageSection(state, key, now) {
    const head = h('div', { class: 'card-head' }, h('h3', null, 'Usage'),
        h('span', { class: 'muted small' }, `from what clients report, last ${USAGE_DAYS} days (UTC)`));
    if (state.status === 'loading') return h('section', { class: 'card', testid: 'usage-card' }, head, h('p', { class: 'loading' }, 'Loading usage…'));
    if (state.status === 'failed') {
        return h('section', { class: 'card', testid: 'usage-card' }, head,
            h('p', { class: 'muted', testid: 'usage-error' }, `Usage could not be loaded: ${state.error.message}`));
    }
    const { model } = state;
    const row = model.flags.get(key);
    const sdks = sdkLines(model.sdks);
    return h('section', { class: 'card usage', testid: 'usage-card' }, head,
        h('dl', { class: 'meta' },
            h('dt', null, 'Last evaluated'), h('dd', null, lastEvaluated(row, model.days, now, 'usage-last-evaluated')),
            h('dt', null, 'Evaluations'), h('dd', { testid: 'usage-total' }, evaluationsText(row ? row.total : 0, model.days)),
            row && row.variants.length ? [h('dt', null, 'Variants served'), h('dd', { testid: 'usage-variants' }, variantsText(row.variants))] : null,
            h('dt', null, 'Clients of the set'), h('dd', { testid: 'usage-sdks' },
                sdks.length ? h('ul', { class: 'inline-list' }, sdks.map((line) => h('li', null, line))) : 'none reported in the last 5 minutes')),
        h('div', { class: 'spark-box' }, sparklineElement(row, model.dayKeys, { width: 360, height: 64, testid: 'usage-sparkline' })));
}
