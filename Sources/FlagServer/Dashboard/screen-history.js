// The versions of a set: who changed what and why; pick two to see them side by side; roll back to one.

import { formDialog, reviewOf } from '/ui/dialog.js';
import { diffListElement } from '/ui/diffview.js';
import { h, replaceChildren, timeElement } from '/ui/dom.js';
import { actionVerb } from '/ui/format.js';
import { loadOnEachVersion, setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';
import { formatUTC, relativeTime } from '/ui/time.js';

/** The history screen of `route.set`; `route.query.key` narrows it to one flag. */
export function render(ctx, route) {
    const setName = route.set;
    const key = route.query.key || '';
    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading history…');
    const diffHost = h('div', { class: 'diff-host', 'aria-live': 'polite' });
    const hint = h('p', { class: 'hint' }, 'Tick two versions to compare them side by side.');
    /** The picked versions, in the order they were picked (the oldest pick goes when a third is ticked). */
    let picked = [];
    let versions = [];
    let diffRequest = 0;

    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, key ? `History of ${key}` : 'History'),
        key ? h('p', null, h('a', { href: hashFor({ name: 'history', set: setName }) }, 'Show every change of the set')) : null,
        hint,
        status,
        h('div', { class: 'table-scroll' },
            h('table', { class: 'data stack history' },
                h('thead', null, h('tr', null, ['Compare', 'Version', 'When', 'Who', 'What', 'Reason', ''].map((name) => h('th', { scope: 'col' }, name)))),
                tbody)),
        diffHost);

    async function showDiff(from, to) {
        const request = ++diffRequest;
        replaceChildren(diffHost, h('p', { class: 'loading' }, `Loading the changes from version ${from} to ${to}…`));
        try {
            const answer = await ctx.api.get('diff', { set: setName }, { from, to });
            if (request !== diffRequest) return;
            const list = diffListElement(answer.json, { leftLabel: `version ${from}`, rightLabel: `version ${to}`, testid: 'diff' });
            list.dataset.from = String(from);
            list.dataset.to = String(to);
            replaceChildren(diffHost, h('h3', { class: 'diff-title' }, `Version ${from} → version ${to}`), list);
        } catch (error) {
            if (request !== diffRequest) return;
            replaceChildren(diffHost);
            if (error.status !== 401) ctx.notices.error(error);
        }
    }

    function pickChanged() {
        for (const box of tbody.querySelectorAll('input[type=checkbox]')) box.checked = picked.includes(Number(box.value));
        if (picked.length === 2) {
            const [a, b] = [...picked].sort((x, y) => x - y);
            showDiff(a, b);
        } else {
            diffRequest += 1;
            replaceChildren(diffHost);
        }
    }

    async function rollback(version) {
        const values = await formDialog({
            title: `Roll ${setName} back to version ${version}?`,
            description: `Makes a new version whose flags and cohorts are those of version ${version}. Nothing is deleted: the history keeps every version.`,
            confirmLabel: 'Roll back', danger: true, review: await ctx.reviewMode(setName),
        });
        if (!values) return;
        // The set's new version reloads this list (the store subscription below).
        await ctx.actions.run({
            endpoint: 'rollback', params: { set: setName }, body: { version, reason: values.reason || undefined },
            refetch: true, review: reviewOf(values), done: (a) => `Rolled ${setName} back to version ${version} (now version ${a.version}).`,
        });
    }

    function row(entry, head, now) {
        const checkboxId = `pick-${entry.version}`;
        const box = h('input', { type: 'checkbox', id: checkboxId, value: String(entry.version), testid: 'history-pick', data: { item: String(entry.version) } });
        box.addEventListener('change', () => {
            picked = picked.filter((version) => version !== entry.version);
            if (box.checked) picked.push(entry.version);
            if (picked.length > 2) picked = picked.slice(-2);
            pickChanged();
        });
        const changed = Array.isArray(entry.changed) ? entry.changed.map((item) => `${item.kind} ${item.key}`).join(', ') : '';
        const what = `${actionVerb(entry.action)}${entry.subject && !actionVerb(entry.action).endsWith('the set') ? ` ${entry.subject}` : ''}`;
        const buttons = [];
        if (entry.version > 1) {
            const show = h('button', { type: 'button', class: 'button small', testid: 'history-show', data: { item: String(entry.version) } }, 'Changes');
            show.addEventListener('click', () => {
                picked = [entry.version - 1, entry.version];
                pickChanged();
            });
            buttons.push(show);
        }
        if (ctx.perms().rollback && entry.version !== head) {
            const button = h('button', { type: 'button', class: 'button small', testid: 'action-rollback', data: { item: String(entry.version) } }, 'Roll back to this');
            button.addEventListener('click', () => rollback(entry.version));
            buttons.push(button);
        }
        return h('tr', { class: 'history-row', testid: 'history-row', data: { version: String(entry.version) } },
            h('td', { 'data-label': 'Compare' }, box, h('label', { for: checkboxId, class: 'visually-hidden' }, `Compare version ${entry.version}`)),
            h('th', { scope: 'row', 'data-label': 'Version' }, String(entry.version)),
            h('td', { 'data-label': 'When' }, timeElement(entry.createdAt, relativeTime(entry.createdAt, now), formatUTC(entry.createdAt))),
            h('td', { 'data-label': 'Who' }, entry.actor ?? ''),
            h('td', { 'data-label': 'What' }, what, changed ? h('div', { class: 'muted small' }, changed) : null),
            h('td', { 'data-label': 'Reason' }, entry.reason ?? ''),
            h('td', { 'data-label': '' }, h('div', { class: 'buttons' }, buttons)));
    }

    async function load() {
        try {
            const answer = await ctx.api.get('history', { set: setName }, { limit: 100, key: key || undefined });
            versions = answer.json.versions || [];
            const now = Date.now();
            const head = ctx.store.state.set?.version ?? (versions[0] && versions[0].version);
            tbody.replaceChildren(...versions.map((entry) => row(entry, head, now)));
            status.hidden = versions.length > 0;
            status.textContent = versions.length ? '' : 'No versions.';
            for (const box of tbody.querySelectorAll('input[type=checkbox]')) box.checked = picked.includes(Number(box.value));
        } catch (error) {
            status.textContent = 'Could not load the history.';
            if (error.status !== 401) ctx.notices.error(error);
        }
    }

    loadOnEachVersion(ctx, load);
    return { node, title: `History · ${setName}` };
}
