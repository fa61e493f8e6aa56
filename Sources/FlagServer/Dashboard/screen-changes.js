// The change requests of a set (docs/reviews.md): open, scheduled and recent ones, each with who proposed and who
// approved it and, on demand, its diff against the current version; approve, reject, apply and withdraw as the
// person's role allows.

import { formDialog } from '/ui/dialog.js';
import { diffListElement } from '/ui/diffview.js';
import { h, replaceChildren, timeElement } from '/ui/dom.js';
import { loadOnEachVersion, setHeader } from '/ui/layout.js';
import { decisionsFor } from '/ui/roles.js';
import { formatUTC, localInputToISO, relativeTime } from '/ui/time.js';

/** What each state shows as. */
const STATE_TEXT = {
    open: 'Open: waits for an approval',
    approved: 'Approved: ready to apply',
    scheduled: 'Scheduled',
    applied: 'Applied',
    rejected: 'Rejected',
    withdrawn: 'Withdrawn',
    failed: 'Failed',
};

/** The changes screen of `route.set`. */
export function render(ctx, route) {
    const setName = route.set;
    const list = h('div', { class: 'changes', testid: 'changes' });
    const status = h('p', { class: 'loading' }, 'Loading the change requests…');
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Change requests'),
        h('p', { class: 'hint' }, 'Writes proposed instead of made: another person approves each, then it is applied '
            + 'as one version, by hand or at its time. Every action dialog can propose instead of writing.'),
        status,
        list);

    async function decide(change, endpoint, label) {
        const values = await formDialog({
            title: `${label}: change request ${change.id}?`, description: change.title, confirmLabel: label,
            danger: endpoint === 'rejectChange' || endpoint === 'withdrawChange',
        });
        if (!values) return;
        try {
            const body = { reason: values.reason || undefined };
            const answer = endpoint === 'withdrawChange'
                ? await ctx.api.call(endpoint, { set: setName, n: change.id }, { query: body })
                : await ctx.api.call(endpoint, { set: setName, n: change.id }, { body });
            const applied = answer.json.appliedVersion ? ` as version ${answer.json.appliedVersion}` : '';
            ctx.notices.toast(`Change request ${change.id} is ${answer.json.state}${applied}.`);
        } catch (error) {
            if (error.status !== 401) ctx.notices.error(error);
        }
        load();
    }

    async function schedule(change) {
        const values = await formDialog({
            title: `When should change request ${change.id} apply?`, description: change.title, confirmLabel: 'Schedule',
            fields: [{ name: 'at', label: 'Apply at (your local time)', type: 'datetime-local', required: true, testid: 'change-at-input' }],
        });
        if (!values) return;
        try {
            const at = localInputToISO(values.at);
            const answer = await ctx.api.call('scheduleChange', { set: setName, n: change.id }, { body: { at, reason: values.reason || undefined } });
            ctx.notices.toast(`Change request ${change.id} is ${answer.json.state}, to apply at ${formatUTC(answer.json.applyAt)}.`);
        } catch (error) {
            if (error.status !== 401) ctx.notices.error(error);
        }
        load();
    }

    async function showDiff(change, host) {
        replaceChildren(host, h('p', { class: 'loading' }, 'Loading what it changes…'));
        try {
            const answer = await ctx.api.get('getChange', { set: setName, n: change.id });
            const conflicts = answer.json.conflicts || [];
            replaceChildren(host,
                conflicts.length
                    ? h('p', { class: 'conflict-note', testid: 'change-conflicts' },
                        `Changed since version ${change.baseVersion}, so it cannot be applied: `
                        + conflicts.map((item) => `${item.kind} ${item.key}`).join(', '))
                    : null,
                diffListElement(answer.json, {
                    leftLabel: `now (version ${answer.json.currentVersion})`, rightLabel: 'as proposed', testid: 'change-diff',
                }));
        } catch (error) {
            replaceChildren(host, h('p', null, `Could not load what it changes: ${error.message}`));
        }
    }

    function card(change, now) {
        const diffHost = h('div', { class: 'diff-host' });
        const show = h('button', { type: 'button', class: 'button small', testid: 'change-show', data: { item: String(change.id) } }, 'Show changes');
        show.addEventListener('click', () => showDiff(change, diffHost));
        const person = ctx.store.state.whoami && ctx.store.state.whoami.name;
        const buttons = decisionsFor(change, { perms: ctx.perms(), person }).map(([endpoint, label, danger]) => {
            const button = h('button', {
                type: 'button', class: danger ? 'button small danger' : 'button small', testid: `change-${endpoint}`,
                data: { item: String(change.id) },
            }, label);
            button.addEventListener('click', () => decide(change, endpoint, label));
            return button;
        });
        if (ctx.perms().changes && ['open', 'approved', 'scheduled'].includes(change.state)) {
            const retime = h('button', { type: 'button', class: 'button small', testid: 'change-schedule', data: { item: String(change.id) } },
                change.applyAt ? 'Change time' : 'Schedule');
            retime.addEventListener('click', () => schedule(change));
            buttons.push(retime);
        }
        const approvals = (change.approvals || []).map((approval) => `${approval.actor}${approval.reason ? ` (${approval.reason})` : ''}`);
        const items = [...(change.flags || []).map((item) => `flag ${item.key}`), ...(change.cohorts || []).map((item) => `cohort ${item.key}`)];
        return h('article', { class: 'change', testid: 'change', data: { id: String(change.id), state: change.state } },
            h('h3', null, `#${change.id} ${change.title}`),
            h('p', { class: 'change-state', testid: 'change-state' }, STATE_TEXT[change.state] ?? change.state,
                change.applyAt ? h('span', null, ' · applies ', timeElement(change.applyAt, relativeTime(change.applyAt, now), formatUTC(change.applyAt))) : null,
                change.appliedVersion ? ` · version ${change.appliedVersion}` : null,
                change.failure ? h('span', { class: 'failure' }, ` · ${change.failure}`) : null),
            h('p', { class: 'muted small' }, `Proposed by ${change.author} `, timeElement(change.createdAt, relativeTime(change.createdAt, now), formatUTC(change.createdAt)),
                ` on version ${change.baseVersion}`, change.reason ? `: ${change.reason}` : '',
                approvals.length ? ` · approved by ${approvals.join(', ')}` : '',
                change.decidedBy && change.state !== 'approved' && change.state !== 'scheduled' ? ` · ${change.state} by ${change.decidedBy}` : ''),
            h('p', { class: 'small' }, items.join(', ')),
            h('div', { class: 'buttons' }, show, buttons),
            diffHost);
    }

    async function load() {
        try {
            const answer = await ctx.api.get('listChanges', { set: setName }, { limit: 1000 });
            const started = performance.now();
            const changes = answer.json.changes || [];
            const now = Date.now();
            const waiting = changes.filter((change) => ['open', 'approved', 'scheduled'].includes(change.state));
            const done = changes.filter((change) => !waiting.includes(change)).slice(0, 50);
            replaceChildren(list,
                h('h3', null, `Waiting (${waiting.length})`),
                waiting.length ? waiting.map((change) => card(change, now)) : h('p', { class: 'empty' }, 'Nothing waits.'),
                h('h3', null, 'Recent'),
                done.length ? done.map((change) => card(change, now)) : h('p', { class: 'empty' }, 'None yet.'));
            status.hidden = true;
            // The browser tests read it: the time to build the list from the answer (BENCHMARKS.md, "Dashboard").
            document.body.dataset.lastRenderMs = (performance.now() - started).toFixed(1);
        } catch (error) {
            status.textContent = 'Could not load the change requests.';
            if (error.status !== 401) ctx.notices.error(error);
        }
    }

    loadOnEachVersion(ctx, load);
    return { node, title: `Changes · ${setName}` };
}
