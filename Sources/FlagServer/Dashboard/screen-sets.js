// The sets the person may see: version, flags, cohorts, stale flags, and the last change (who, when).

import { h, timeElement } from '/ui/dom.js';
import { actionVerb } from '/ui/format.js';
import { hashFor } from '/ui/router.js';
import { formatUTC, relativeTime } from '/ui/time.js';

function lastChangeCell(change, now) {
    if (!change) return h('td', { 'data-label': 'Last change' }, '—');
    const reason = typeof change.reason === 'string' && change.reason !== '' ? h('span', { class: 'reason' }, `“${change.reason}”`) : null;
    return h('td', { 'data-label': 'Last change' },
        h('span', null, `${change.actor ?? 'someone'} ${actionVerb(change.action)}, `),
        timeElement(change.time, relativeTime(change.time, now), formatUTC(change.time)),
        reason ? ' ' : null, reason);
}

function row(set, now) {
    const link = h('a', { href: hashFor({ name: 'flags', set: set.name }), class: 'row-link' }, set.name);
    const stale = Number(set.stale) || 0;
    const staleCell = stale > 0
        ? h('a', { href: hashFor({ name: 'flags', set: set.name, query: { state: 'expired' } }), class: 'count-warn' }, String(stale))
        : h('span', null, '0');
    const tr = h('tr', { class: 'set-row clickable', testid: 'set-row', data: { set: set.name } },
        h('th', { scope: 'row' }, link),
        h('td', { 'data-label': 'Version' }, String(set.version ?? '')),
        h('td', { 'data-label': 'Flags' }, String(set.flags ?? '')),
        h('td', { 'data-label': 'Cohorts' }, String(set.cohorts ?? '')),
        h('td', { 'data-label': 'Stale', title: 'expired and not archived' }, staleCell),
        lastChangeCell(set.lastChange, now));
    // The whole row opens the set for a mouse; the link inside is what the keyboard reaches.
    tr.addEventListener('click', (event) => {
        if (event.target.closest('a')) return;
        location.hash = link.getAttribute('href');
    });
    return tr;
}

/** The sets screen. */
export function render(ctx) {
    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading sets…');
    const node = h('section', { class: 'screen' },
        h('h1', { tabindex: '-1' }, 'Flag sets'),
        status,
        h('div', { class: 'table-scroll' },
            h('table', { class: 'data stack' },
                h('thead', null, h('tr', null, ['Set', 'Version', 'Flags', 'Cohorts', 'Stale', 'Last change']
                    .map((name) => h('th', { scope: 'col' }, name)))),
                tbody)));

    function show() {
        const sets = ctx.store.state.sets || [];
        const now = Date.now();
        tbody.replaceChildren(...sets.map((set) => row(set, now)));
        status.textContent = sets.length ? '' : 'No flag set is visible to you.';
        status.hidden = sets.length > 0;
    }

    ctx.api.get('listSets').then((answer) => {
        ctx.store.setSets(answer.json.sets || []);
    }, (error) => {
        status.textContent = 'Could not load the sets.';
        if (error.status !== 401) ctx.notices.error(error);
    });
    const unsubscribe = ctx.store.subscribe((change) => {
        if (change.topic === 'sets') show();
    });
    if (ctx.store.state.sets) show();
    return { node, title: 'Flag sets', dispose: unsubscribe };
}
