// The flags of a set: every row built once (up to thousands, no pagination), filtered by toggling `hidden`, and
// rebuilt one row at a time when the stream changes a flag. After each render or filter the time it took is in
// `document.body.dataset.lastRenderMs`, for the browser tests' budget (1,000 flags in 200 ms). What clients report
// (last evaluated, evaluations per day) arrives once, after the rows, and fills their usage cells.

import { FLAG_FIELDS, FLAG_KINDS, FLAG_TYPES, fieldProblems, flagFromForm } from '/ui/authoring.js';
import { formDialog, reviewOf } from '/ui/dialog.js';
import { h, replaceChildren } from '/ui/dom.js';
import { indexFlag, kinds, matches, normalizeFilter, owners, percentAt, QUIET_STATE, rolloutPhase } from '/ui/flagmodel.js';
import { percentText } from '/ui/format.js';
import { hashFor } from '/ui/router.js';
import { expiryText, formatUTC, localInputToISO } from '/ui/time.js';
import { setHeader } from '/ui/layout.js';
import { loadUsage, USAGE_DAYS, usageCellContent } from '/ui/usageview.js';

/** The state filter's choices: SPEC's states, then the quiet one. */
const STATE_CHOICES = ['killed', 'rolling out', 'paused', 'expired', 'stale', 'archived', QUIET_STATE];

function cell(label, ...children) {
    return h('td', { 'data-label': label }, ...children);
}

function rolloutCell(flag, now) {
    if (!flag.rollout || typeof flag.rollout !== 'object') return cell('Rollout', h('span', { class: 'muted' }, '—'));
    const percent = percentAt(flag.rollout, now);
    const paused = rolloutPhase(flag.rollout, now) === 'paused';
    return cell('Rollout',
        h('meter', { class: 'rollout-bar', min: '0', max: '100', low: '0', high: '100', optimum: '100', value: String(percent), 'aria-label': `rollout ${percentText(percent)}` }),
        h('span', { class: 'rollout-text' }, paused ? `${percentText(percent)} paused` : percentText(percent)));
}

/** The usage cell of flag `key`, the row's last: filled from `usage` (usage.js's model) once it has loaded. */
function usageCell(usage, key, now) {
    return h('td', { 'data-label': 'Used', class: 'usage-cell', testid: 'usage-cell' },
        usage ? usageCellContent(usage, key, now) : h('span', { class: 'muted' }, '…'));
}

function buildRow(setName, key, flag, entry, now, usage) {
    const f = flag && typeof flag === 'object' ? flag : {};
    const state = entry.states[0];
    const expiry = expiryText(f.expiresAt, now);
    const description = typeof f.description === 'string' && f.description !== '' ? h('span', { class: 'description' }, f.description) : null;
    return h('tr', { class: 'flag-row', testid: 'flag-row', data: { flagKey: key, state } },
        h('th', { scope: 'row' },
            h('a', { href: hashFor({ name: 'flag', set: setName, key }), class: 'flag-key' }, key),
            description),
        cell('Type', f.type ?? ''),
        cell('Kind', f.kind ?? ''),
        cell('State', h('span', { class: `badge state-${state.replace(' ', '-')}`, testid: 'state-badge' }, state)),
        rolloutCell(f, now),
        cell('Expires', h('span', { class: expiry.state === 'expired' ? 'expiry expired' : 'expiry', title: f.expiresAt ? formatUTC(f.expiresAt) : undefined }, expiry.text)),
        cell('Owner', f.owner ?? ''),
        usageCell(usage, key, now));
}

/** A filter menu; `preset` (from the address) is chosen once its option exists. */
function select(id, label, testid, choices, preset) {
    const element = h('select', { id, testid },
        h('option', { value: '' }, 'any'),
        choices.map((choice) => h('option', { value: choice, selected: choice === preset }, choice)));
    return { element, preset: preset || '', wrapper: h('div', { class: 'field' }, h('label', { for: id }, label), element) };
}

/**
 * A new flag of the open set from a dialog (type, kind, a string flag's values, default, kill value, description,
 * owner, expiry), which can propose it instead; goes to the flag once written. Without an expiry, a release or
 * experiment flag gets its kind's lifetime from the server.
 */
async function createFlag(ctx, setName) {
    const read = (form) => flagFromForm({ ...form, expiresAt: form.expiresAt ? localInputToISO(form.expiresAt) : '' });
    const written = await formDialog({
        title: 'New flag', confirmLabel: 'Create flag', review: await ctx.reviewMode(setName),
        fields: [
            { name: 'key', label: 'Key', required: true, testid: 'flag-key-input', hint: 'Lower-case letters, digits, ".", "_" and "-", as the code names it.' },
            { name: 'type', label: 'Type', type: 'select', options: FLAG_TYPES, value: 'bool', testid: 'flag-type-select' },
            { name: 'kind', label: 'Kind', type: 'select', options: FLAG_KINDS, value: 'release', testid: 'flag-kind-select' },
            { name: 'values', label: 'Values (optional): the only ones it may serve', type: 'textarea', testid: 'flag-values-input',
                when: (v) => v.type === 'string', hint: 'One per line, or on one line separated by commas. The default must be one of them.' },
            { name: 'default', label: 'Default value', required: true, value: 'false', testid: 'flag-default-input',
                hint: 'true/false, a number, the text itself for a string flag, or JSON.' },
            { name: 'killValue', label: 'Kill value (optional)', testid: 'flag-kill-input' },
            { name: 'description', label: 'Description', testid: 'flag-description-input' },
            { name: 'owner', label: 'Owner', testid: 'flag-owner-input' },
            { name: 'expiresAt', label: 'Expires (optional, your local time)', type: 'datetime-local', testid: 'flag-expires-input',
                hint: 'Left empty, a release flag expires in 42 days and an experiment in 90.' },
        ],
        check: (form) => read(form).errors ?? [],
        submit: async (form) => {
            const built = read(form);
            const answer = await ctx.actions.run({
                endpoint: 'putFlag', params: { set: setName, key: built.key }, body: { flag: built.flag, reason: form.reason || undefined },
                createOnly: true, review: reviewOf(form), done: (a) => `Created ${built.key} (version ${a.version}).`,
                problemsAt: (error) => fieldProblems(error, { prefixes: [`flags.${built.key}`, 'flag'], fields: FLAG_FIELDS, fallback: 'key' }),
            });
            return answer && !answer.problems ? { ...answer, key: built.key } : answer;
        },
    });
    if (written && written.changeRequest === undefined) location.hash = hashFor({ name: 'flag', set: setName, key: written.key });
}

/** The flags screen of `route.set`; `route.query` may preset `q`, `kind`, `state`, `owner`. */
export function render(ctx, route) {
    const setName = route.set;
    const search = h('input', {
        type: 'search', id: 'flag-search', testid: 'flag-search', value: route.query.q ?? '', autocomplete: 'off',
        spellcheck: 'false', placeholder: 'key, description or owner',
    });
    const kind = select('filter-kind', 'Kind', 'filter-kind', [], route.query.kind);
    const state = select('filter-state', 'State', 'filter-state', STATE_CHOICES, route.query.state);
    const owner = select('filter-owner', 'Owner', 'filter-owner', [], route.query.owner);
    const count = h('p', { class: 'count', testid: 'flag-count', 'aria-live': 'polite' });
    const tbody = h('tbody');
    const empty = h('p', { class: 'empty', hidden: true }, 'No flag matches.');
    const usageNote = h('p', { class: 'muted small', testid: 'usage-note' }, 'Loading what clients report…');
    const create = ctx.perms().flagActions
        ? h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'button', testid: 'flag-create' }, 'New flag'))
        : null;
    create?.querySelector('button').addEventListener('click', () => createFlag(ctx, setName));
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Flags'),
        create,
        h('div', { class: 'filters', role: 'search' },
            h('div', { class: 'field grow' }, h('label', { for: 'flag-search' }, 'Search'), search),
            kind.wrapper, state.wrapper, owner.wrapper),
        count,
        usageNote,
        h('div', { class: 'table-scroll' },
            h('table', { class: 'data stack flags-table' },
                h('thead', null, h('tr', null, ['Flag', 'Type', 'Kind', 'State', 'Rollout', 'Expires', 'Owner', `Used (${USAGE_DAYS} days)`]
                    .map((name) => h('th', { scope: 'col' }, name)))),
                tbody)),
        empty);

    /** key → {row, entry}: the rows, built once each. */
    let rows = new Map();
    /** The set's usage (usage.js's model) once loaded. */
    let usage = null;
    let disposed = false;

    function currentFilter() {
        return normalizeFilter({ text: search.value, kind: kind.element.value, state: state.element.value, owner: owner.element.value });
    }

    function applyFilter() {
        const filter = currentFilter();
        let shown = 0;
        for (const { row, entry } of rows.values()) {
            const visible = matches(entry, filter);
            if (row.hidden === visible) row.hidden = !visible;
            if (visible) shown += 1;
        }
        count.textContent = `${shown} of ${rows.size} flag${rows.size === 1 ? '' : 's'}`;
        empty.hidden = shown > 0 || rows.size === 0;
    }

    function refillSelect(target, choices) {
        const value = target.element.value || target.preset;
        target.preset = '';
        target.element.replaceChildren(h('option', { value: '' }, 'any'),
            ...choices.map((choice) => h('option', { value: choice, selected: choice === value }, choice)));
        if (value && !choices.includes(value)) {
            target.element.appendChild(h('option', { value, selected: true }, value));
        }
    }

    function timed(work) {
        const started = performance.now();
        work();
        applyFilter();
        document.body.dataset.lastRenderMs = (performance.now() - started).toFixed(1);
    }

    function makeRow(key, flag, now) {
        const entry = indexFlag(key, flag, now);
        return { row: buildRow(setName, key, flag, entry, now, usage), entry };
    }

    /** Fills every row's usage cell, once the usage has loaded. */
    function fillUsage() {
        const now = Date.now();
        for (const [key, { row }] of rows) replaceChildren(row.lastElementChild, usageCellContent(usage, key, now));
    }

    function renderAll() {
        timed(() => {
            const set = ctx.store.state.set;
            const flags = set ? set.flags : {};
            const now = Date.now();
            refillSelect(kind, kinds(flags));
            refillSelect(owner, owners(flags));
            rows = new Map();
            const fragment = document.createDocumentFragment();
            for (const key of Object.keys(flags).sort()) {
                const made = makeRow(key, flags[key], now);
                rows.set(key, made);
                fragment.appendChild(made.row);
            }
            tbody.replaceChildren(fragment);
        });
    }

    function renderChanged(change) {
        timed(() => {
            const flags = ctx.store.state.set.flags;
            const now = Date.now();
            for (const key of change.removedFlags || []) {
                const old = rows.get(key);
                if (old) old.row.remove();
                rows.delete(key);
            }
            for (const key of change.flags || []) {
                if (!(key in flags)) continue;
                const made = makeRow(key, flags[key], now);
                const old = rows.get(key);
                if (old) {
                    old.row.replaceWith(made.row);
                } else {
                    const next = [...rows.keys()].sort().find((other) => other > key);
                    tbody.insertBefore(made.row, next ? rows.get(next).row : null);
                }
                rows.set(key, made);
            }
            if ((change.flags || []).length || (change.removedFlags || []).length) {
                refillSelect(owner, owners(flags));
                refillSelect(kind, kinds(flags));
            }
        });
    }

    const refilter = () => timed(() => {});
    search.addEventListener('input', refilter);
    for (const target of [kind, state, owner]) target.element.addEventListener('change', refilter);

    const unsubscribe = ctx.store.subscribe((change) => {
        if (change.topic !== 'set' || !ctx.store.state.set) return;
        if (change.reset) renderAll();
        else renderChanged(change);
    });
    renderAll();
    loadUsage(ctx.api, setName).then((model) => {
        if (disposed) return;
        usage = model;
        usageNote.textContent = `Used: when each flag was last evaluated and its evaluations per day over the last ${model.days} days, `
            + 'as clients report them (UTC days).';
        fillUsage();
    }, (error) => {
        if (disposed || error.status === 401) return;
        usageNote.textContent = `Usage could not be loaded: ${error.message}`;
    });
    return {
        node,
        title: `Flags · ${setName}`,
        dispose() {
            disposed = true;
            unsubscribe();
        },
    };
}
