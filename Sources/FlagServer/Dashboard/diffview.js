// Side-by-side diffs of flags and cohorts (history versions, a 409's changes, two sets), member by member as
// jsondiff.js computes them. Differing members first; the unchanged ones fold away.

import { h } from '/ui/dom.js';
import { changedMembers, diffMembers } from '/ui/jsondiff.js';

function valueCell(value, side, change) {
    if (value === undefined) return h('td', { class: `diff-cell ${side} absent` }, h('em', null, 'absent'));
    const text = value !== null && typeof value === 'object' ? JSON.stringify(value, null, 2) : JSON.stringify(value);
    return h('td', { class: `diff-cell ${side} ${change}` }, h('pre', { class: 'json' }, text));
}

function rowElement(row) {
    return h('tr', { class: `diff-row ${row.change}`, data: { path: row.path, change: row.change } },
        h('th', { scope: 'row', class: 'diff-path' }, h('code', null, row.path || '(item)')),
        valueCell(row.before, 'before', row.change),
        valueCell(row.after, 'after', row.change));
}

function table(rows, leftLabel, rightLabel, caption) {
    return h('div', { class: 'table-scroll' },
        h('table', { class: 'diff-table' },
            h('caption', { class: 'visually-hidden' }, caption),
            h('thead', null, h('tr', null,
                h('th', { scope: 'col' }, 'Member'), h('th', { scope: 'col' }, leftLabel), h('th', { scope: 'col' }, rightLabel))),
            h('tbody', null, rows.map(rowElement))));
}

/**
 * How an item differs, in a few words: `onlyRight` (`added`), `onlyLeft` (`removed`), or
 * `changed: killed, rollout`.
 */
export function itemSummary(before, after, { onlyLeft = 'removed', onlyRight = 'added' } = {}) {
    if (before === null || before === undefined) return onlyRight;
    if (after === null || after === undefined) return onlyLeft;
    return `changed: ${changedMembers(before, after).join(', ')}`;
}

/**
 * One item's side-by-side diff: `{kind: 'flag' | 'cohort', name, before, after}`. `extra` (a node: the promote
 * button) goes under the heading; `wording` is itemSummary's.
 */
export function itemDiffElement(item, { leftLabel, rightLabel, extra, wording }) {
    const rows = diffMembers(item.before, item.after);
    const differing = rows.filter((row) => row.change !== 'same');
    const same = rows.filter((row) => row.change === 'same');
    return h('section', { class: 'diff-item', testid: 'diff-item', data: { kind: item.kind, item: item.name } },
        h('h3', null, `${item.kind} `, h('code', null, item.name), h('span', { class: 'diff-summary' }, ` — ${itemSummary(item.before, item.after, wording)}`)),
        extra || null,
        table(differing, leftLabel, rightLabel, `${item.kind} ${item.name}: members that differ`),
        same.length
            ? h('details', { class: 'diff-same' }, h('summary', null, `${same.length} unchanged member${same.length === 1 ? '' : 's'}`),
                table(same, leftLabel, rightLabel, `${item.kind} ${item.name}: unchanged members`))
            : null);
}

/**
 * The diffs of an answer with `flags: [{key, before, after}]` and `cohorts: [{name, before, after}]` (history diff,
 * set compare). `extraFor(item)` may add a node per item; `wording` names an item on one side only.
 */
export function diffListElement(answer, { leftLabel, rightLabel, extraFor, testid, wording }) {
    const items = [
        ...(answer.flags || []).map((entry) => ({ kind: 'flag', name: entry.key, before: entry.before, after: entry.after })),
        ...(answer.cohorts || []).map((entry) => ({ kind: 'cohort', name: entry.name ?? entry.key, before: entry.before, after: entry.after })),
    ];
    const root = h('div', { class: 'diff-list', testid });
    if (items.length === 0) {
        root.appendChild(h('p', { class: 'empty' }, 'No flag or cohort differs.'));
        return root;
    }
    for (const item of items) {
        root.appendChild(itemDiffElement(item, { leftLabel, rightLabel, wording, extra: extraFor ? extraFor(item) : null }));
    }
    return root;
}
