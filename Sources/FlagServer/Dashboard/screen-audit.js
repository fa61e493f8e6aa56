// The audit log, of every set the person may see (`#/audit`) or of one (`#/sets/{set}/audit`), filtered by actor,
// subject (a flag, cohort or key) and time. The filters live in the hash, so a filtered view can be linked.

import { h, timeElement } from '/ui/dom.js';
import { actionVerb } from '/ui/format.js';
import { setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';
import { formatUTC, localInputToISO, relativeTime } from '/ui/time.js';

function input(id, label, value, type = 'text', placeholder) {
    const element = h('input', { type, id, testid: id, value: value ?? '', autocomplete: 'off', spellcheck: 'false', placeholder });
    return { element, wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), element) };
}

/** The ISO time in a query as a datetime-local input's text (local time), for showing the filter again. */
function isoToLocalInput(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return '';
    const d = new Date(t);
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The audit screen; `route.set` absent for the all-sets log. */
export function render(ctx, route) {
    const setName = route.name === 'set-audit' ? route.set : null;
    const q = route.query;
    const actor = input('audit-actor', 'Actor', q.actor, 'text', 'alice');
    const subject = input('audit-subject', 'Flag or item', q.subject, 'text', 'new-checkout');
    const since = input('audit-since', 'Since (local time)', isoToLocalInput(q.since), 'datetime-local');
    const until = input('audit-until', 'Until (local time)', isoToLocalInput(q.until), 'datetime-local');
    const setFilter = setName ? null : input('audit-set', 'Set', q.set, 'text', 'all sets');
    const apply = h('button', { type: 'submit', class: 'button primary', testid: 'audit-apply' }, 'Filter');
    const reset = h('a', { href: setName ? hashFor({ name: 'set-audit', set: setName }) : '#/audit', class: 'button-link' }, 'Clear filters');
    const form = h('form', { class: 'filters', role: 'search' },
        setFilter ? setFilter.wrapper : null, actor.wrapper, subject.wrapper, since.wrapper, until.wrapper,
        h('div', { class: 'field buttons' }, apply, reset));
    form.addEventListener('submit', (event) => {
        event.preventDefault();
        const query = {
            actor: actor.element.value.trim(), subject: subject.element.value.trim(),
            since: localInputToISO(since.element.value), until: localInputToISO(until.element.value),
            set: setFilter ? setFilter.element.value.trim() : undefined,
        };
        ctx.navigate(setName ? hashFor({ name: 'set-audit', set: setName, query }) : hashFor({ name: 'audit', query }));
    });

    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading the audit log…');
    const columns = ['When', 'Who', 'Action', 'Subject', 'Reason', 'Version'];
    const node = h('section', { class: 'screen' },
        setName ? setHeader(ctx, route) : null,
        setName ? h('h2', { tabindex: '-1' }, 'Audit log') : h('h1', { tabindex: '-1' }, 'Audit log'),
        form,
        status,
        h('div', { class: 'table-scroll' }, h('table', { class: 'data stack audit' },
            h('thead', null, h('tr', null, columns.map((name) => h('th', { scope: 'col' }, name)))),
            tbody)));

    const query = { limit: 200, actor: q.actor, subject: q.subject, since: q.since, until: q.until, set: setName ? undefined : q.set };
    (setName ? ctx.api.get('setAudit', { set: setName }, query) : ctx.api.get('audit', {}, query)).then((answer) => {
        const records = answer.json.records || [];
        const now = Date.now();
        tbody.replaceChildren(...records.map((record) => h('tr', { class: 'audit-row', testid: 'audit-row' },
            h('td', { 'data-label': 'When' }, timeElement(record.time, relativeTime(record.time, now), formatUTC(record.time))),
            h('td', { 'data-label': 'Who' }, record.actor ?? ''),
            h('td', { 'data-label': 'Action', title: record.action ?? '' }, actionVerb(record.action)),
            h('td', { 'data-label': 'Subject' }, record.subject ?? ''),
            h('td', { 'data-label': 'Reason' }, record.reason ?? ''),
            h('td', { 'data-label': 'Version' }, record.version === undefined ? '' : String(record.version)))));
        status.hidden = records.length > 0;
        status.textContent = records.length ? '' : 'No records match.';
    }, (error) => {
        status.textContent = 'Could not load the audit log.';
        if (error.status !== 401) ctx.notices.error(error);
    });
    return { node, title: setName ? `Audit · ${setName}` : 'Audit log' };
}
