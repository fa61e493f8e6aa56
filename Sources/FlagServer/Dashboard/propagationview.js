// After a kill is written: how far it has reached the clients, live, in the words `flagctl kill --wait` prints.
// The dialog asks the propagation route every 500 ms for up to 30 s (propagation.js), and stops when every active
// instance reports the version, when nobody is active, or when it is closed.

import { messageDialog } from '/ui/dialog.js';
import { h, replaceChildren } from '/ui/dom.js';
import {
    createPropagationPoller, laggingRows, outcomeText, POLL_TIMEOUT_MS, propagationSummary, silentText,
} from '/ui/propagation.js';

function laggingTable(propagation, now) {
    const { rows, unlisted } = laggingRows(propagation, now);
    if (!rows.length && !unlisted) return null;
    const table = rows.length ? h('div', { class: 'table-scroll' }, h('table', { class: 'data lagging', testid: 'propagation-lagging' },
        h('caption', null, 'Lagging instances'),
        h('thead', null, h('tr', null, ['Instance', 'SDK', 'App', 'Version', 'Last seen'].map((name) => h('th', { scope: 'col' }, name)))),
        h('tbody', null, rows.map((row) => h('tr', { testid: 'lagging-row', data: { instance: row.id } },
            h('td', null, h('code', null, row.id)), h('td', null, row.sdk), h('td', null, row.app),
            h('td', null, row.version), h('td', null, row.lastSeen)))))) : null;
    const more = unlisted ? h('p', { class: 'muted' }, `… and ${unlisted} more lagging, not listed by the server (it lists 100).`) : null;
    return [table, more];
}

/**
 * Shows the propagation of version `version` of `set` (just written by a kill of `key`) until the person closes
 * the dialog; resolves then. The dialog's `data-outcome` is `waiting`, `confirmed`, `nobody`, `timeout` or
 * `failed`.
 */
export function showPropagation(ctx, { set, key, version }) {
    const summary = h('p', { class: 'propagation-summary', testid: 'propagation-summary', 'aria-live': 'polite' }, 'Asking the server…');
    const status = h('p', { class: 'propagation-status', testid: 'propagation-status' });
    const details = h('div');
    const silent = h('p', { class: 'muted', testid: 'propagation-silent', hidden: true });
    const failure = h('p', { class: 'propagation-error', testid: 'propagation-error', hidden: true });
    const view = messageDialog({
        title: `${key} killed: version ${version}`,
        testid: 'propagation',
        data: { outcome: 'waiting', version },
        body: [
            h('p', { class: 'dialog-description' }, 'The kill is written. Clients report the version they applied; '
                + `this follows them for up to ${POLL_TIMEOUT_MS / 1000} s.`),
            summary, status, details, silent, failure,
        ],
        buttons: [{ label: 'Close', value: 'close', testid: 'propagation-close' }],
    });
    view.element.classList.add('propagation');
    const controller = new AbortController();
    const poller = createPropagationPoller({
        load: async () => (await ctx.api.get('propagation', { set, n: version }, undefined, { signal: controller.signal })).json,
        onUpdate({ propagation, outcome, elapsedMs }) {
            view.element.dataset.outcome = outcome;
            view.element.dataset.applied = String(propagation.applied);
            view.element.dataset.active = String(propagation.active);
            summary.textContent = propagationSummary(propagation);
            status.textContent = outcomeText(outcome, propagation, elapsedMs);
            replaceChildren(details, outcome === 'confirmed' ? null : laggingTable(propagation, Date.now()));
            silent.textContent = silentText(propagation.silent);
            silent.hidden = propagation.silent === 0;
            failure.hidden = true;
        },
        onError(error, { final }) {
            if (error.status === 401) {
                view.close(null);
                return;
            }
            failure.textContent = `${final ? 'Stopped' : 'Retrying'}: ${error.message}`;
            failure.hidden = false;
            if (final) view.element.dataset.outcome = 'failed';
        },
        clock: () => Date.now(),
        schedule: (fn, ms) => setTimeout(fn, ms),
        cancel: (handle) => clearTimeout(handle),
    });
    return view.closed.then(() => {
        poller.stop();
        controller.abort();
    });
}
