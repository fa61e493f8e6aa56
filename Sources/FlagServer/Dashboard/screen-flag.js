// One flag: what it serves and to whom, in evaluation order (SPEC §2), its rollout as a chart, the flags it requires
// and those that require it, and the actions the person's role allows. Every action asks for a reason; kill and
// restore require one.

import { rolloutChartElement } from '/ui/chart.js';
import { focusKey, h, replaceChildren, restoreFocus, timeElement } from '/ui/dom.js';
import {
    dependentsOf, enumChoices, flagStates, percentAt, prerequisitesAndRules, rolloutPhase, scheduleSteps,
    pausedAtMillis,
} from '/ui/flagmodel.js';
import { flagActions } from '/ui/flagactions.js';
import { overrideTarget, percentText, ruleServe, ruleTarget, valueText } from '/ui/format.js';
import { setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';
import { expiryText, formatUTC, relativeTime } from '/ui/time.js';
import { loadUsage, usageSection } from '/ui/usageview.js';

function actionButton(testid, label, handler, { danger = false, item } = {}) {
    const button = h('button', { type: 'button', class: danger ? 'button danger' : 'button', testid, data: item === undefined ? undefined : { item } }, label);
    button.addEventListener('click', handler);
    return button;
}

function definition(term, ...details) {
    return [h('dt', null, term), h('dd', null, ...details)];
}

function valueCode(value) {
    return h('code', { class: 'value' }, valueText(value));
}

/** A link to the screen of flag `key` of the set `setName`. */
function flagLink(setName, key) {
    return h('a', { href: hashFor({ name: 'flag', set: setName, key }) }, key);
}

/**
 * What the flag requires (`prerequisites`, flagmodel.js's) as `new-checkout = true`, and the flags that require it
 * (`dependents`), each a link to its flag.
 */
function prerequisitesSection(setName, prerequisites, dependents, can, actions) {
    const items = prerequisites.map((item) => h('li', { testid: 'prerequisite', data: { flag: item.flag } },
        h('div', { class: 'rule-text' },
            flagLink(setName, item.flag), ' = ', item.values.map((value, index) => [index ? ' or ' : null, valueCode(value)])),
        can ? actionButton('action-prerequisite-remove', 'Remove', () => actions.removePrerequisite(item.flag), { item: item.flag }) : null));
    return h('section', { class: 'card', testid: 'flag-prerequisites' },
        h('div', { class: 'card-head' }, h('h3', null, 'Prerequisites'),
            can ? actionButton('action-prerequisite-add', 'Add prerequisite', () => actions.addPrerequisite()) : null),
        prerequisites.length ? h('ul', { class: 'prerequisites' }, items) : h('p', { class: 'muted' }, 'No prerequisites: the flag does not depend on other flags.'),
        h('div', { class: 'dependents', testid: 'flag-dependents' },
            h('h4', null, 'Required by'),
            dependents.length
                ? h('ul', { class: 'inline-list' }, dependents.map((other) => h('li', { testid: 'dependent', data: { flag: other } }, flagLink(setName, other))))
                : h('p', { class: 'muted' }, 'No flag requires this one.')));
}

/** The flag's rules, without the rule that carries its prerequisites on the wire (`prerequisitesAndRules`). */
function rulesSection(rules, can, actions) {
    const items = rules.map((rule, index) => h('li', { class: 'rule', testid: 'rule', data: { item: rule.name ?? String(index) } },
        h('div', { class: 'rule-text' },
            h('code', { class: 'rule-name' }, rule.name ?? `rule ${index + 1}`), ' ',
            h('span', null, ruleTarget(rule)), ' → ', h('span', { class: 'serve' }, ruleServe(rule))),
        can && typeof rule.name === 'string' ? actionButton('action-rule-remove', 'Remove', () => actions.removeRule(rule.name), { item: rule.name }) : null));
    return h('section', { class: 'card' },
        h('div', { class: 'card-head' }, h('h3', null, 'Rules'),
            can ? actionButton('action-rule-add', 'Add rule', () => actions.addRule()) : null),
        rules.length ? h('ol', { class: 'rules' }, items) : h('p', { class: 'muted' }, 'No rules.'));
}

function overridesSection(flag, now, can, actions) {
    const overrides = Array.isArray(flag.overrides) ? flag.overrides : [];
    const items = overrides.map((override) => {
        const until = typeof override.until === 'string' ? override.until : null;
        const ended = until !== null && Date.parse(until) <= now;
        const who = overrideTarget(override);
        return h('li', { class: ended ? 'override ended' : 'override', testid: 'override', data: { item: who } },
            h('div', null,
                h('span', null, who), ' → ', valueCode(override.value), ' ',
                until ? h('span', { class: 'muted' }, ended ? 'ended ' : 'until ', timeElement(until, ended ? relativeTime(until, now) : `${formatUTC(until)} (${relativeTime(until, now)})`, formatUTC(until)))
                    : h('span', { class: 'muted' }, 'no end')),
            can ? actionButton('action-override-remove', 'Remove', () => actions.removeOverride(override), { item: who }) : null);
    });
    return h('section', { class: 'card' },
        h('div', { class: 'card-head' }, h('h3', null, 'Overrides'),
            can ? actionButton('action-override', 'Add override', () => actions.addOverride()) : null),
        overrides.length ? h('ul', { class: 'overrides' }, items) : h('p', { class: 'muted' }, 'No overrides.'));
}

/** The flag's change requests that apply at a time, once they have loaded (`pendingSection`'s `pending`). */
function scheduledChanges(pending) {
    return pending.status === 'ready' ? pending.changes.filter((change) => typeof change.applyAt === 'string') : [];
}

/** The rollout chart, with the flag's scheduled changes on its time axis. */
function chartBox(rollout, now, pending) {
    const width = Math.max(320, Math.min(640, window.innerWidth - 56));
    return h('div', { class: 'chart-box', testid: 'rollout-chart-box' }, rolloutChartElement(rollout, now, width, scheduledChanges(pending)));
}

function rolloutSection(flag, now, can, actions, pending) {
    const rollout = flag.rollout && typeof flag.rollout === 'object' ? flag.rollout : null;
    const buttons = [];
    if (can) {
        buttons.push(actionButton('action-rollout', rollout ? 'Change rollout' : 'Roll out', () => actions.setRollout()));
        if (rollout && Array.isArray(rollout.schedule)) {
            if (pausedAtMillis(rollout) === null) buttons.push(actionButton('action-rollout-pause', 'Pause', () => actions.pauseRollout()));
            else buttons.push(actionButton('action-rollout-resume', 'Resume', () => actions.resumeRollout()));
        }
        if (rollout) buttons.push(actionButton('action-rollout-remove', 'Remove rollout', () => actions.removeRollout(), { danger: true }));
    }
    const head = h('div', { class: 'card-head' }, h('h3', null, 'Rollout'), h('div', { class: 'buttons' }, buttons));
    if (!rollout) return h('section', { class: 'card' }, head, h('p', { class: 'muted' }, 'No flag-level rollout: after its rules the flag serves its default.'));
    const percent = percentAt(rollout, now);
    const phase = rolloutPhase(rollout, now);
    const paused = pausedAtMillis(rollout);
    const lines = [h('p', null, `Serves `, valueCode(rollout.value), ` to ${percentText(percent)} of units now (${phase}).`)];
    if (paused !== null) {
        lines.push(h('p', { class: 'paused-note' }, `Paused since ${formatUTC(paused)} (${relativeTime(paused, now)}). `
            + 'Resuming moves the remaining steps later by the pause; the chart shows them as if resumed now.'));
    }
    if (typeof rollout.salt === 'string' && rollout.salt !== '') lines.push(h('p', { class: 'muted' }, `Salt: ${rollout.salt}`));
    let table = null;
    const steps = scheduleSteps(rollout);
    if (steps.length) {
        table = h('div', { class: 'table-scroll' }, h('table', { class: 'data schedule' },
            h('caption', null, 'Schedule'),
            h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'At (UTC)'), h('th', { scope: 'col' }, 'Percent'), h('th', { scope: 'col' }, 'When'))),
            h('tbody', null, steps.map((step) => h('tr', { class: step.at <= (paused ?? now) ? 'step done' : 'step' },
                h('td', null, formatUTC(step.at)), h('td', null, percentText(step.percent)), h('td', null, relativeTime(step.at, now)))))));
    }
    return h('section', { class: 'card' }, head, lines, chartBox(rollout, now, pending), table);
}

/**
 * The change requests waiting to change the flag (docs/reviews.md): open, approved and scheduled ones, soonest
 * first, each with when it applies; `pending` is `{status: 'loading' | 'ready' | 'failed', changes}`.
 */
function pendingSection(pending, route, now) {
    const changes = pending.status === 'ready' ? pending.changes : [];
    if (pending.status === 'ready' && changes.length === 0) return h('section', { class: 'card', testid: 'flag-pending', hidden: true });
    const sorted = [...changes].sort((a, b) => (a.applyAt ?? '9').localeCompare(b.applyAt ?? '9') || a.id - b.id);
    return h('section', { class: 'card', testid: 'flag-pending' },
        h('h3', null, 'Pending changes'),
        pending.status === 'loading' ? h('p', { class: 'loading' }, 'Loading the change requests…') : null,
        pending.status === 'failed' ? h('p', { class: 'muted' }, 'Could not load the change requests.') : null,
        h('ul', null, sorted.map((change) => h('li', { testid: 'flag-pending-change', data: { id: String(change.id), state: change.state } },
            h('a', { href: hashFor({ name: 'changes', set: route.set }) }, `#${change.id} ${change.title}`),
            ` · ${change.state} · by ${change.author}`,
            change.applyAt ? h('span', null, ' · applies ', timeElement(change.applyAt, relativeTime(change.applyAt, now), formatUTC(change.applyAt))) : null))));
}

/**
 * `usage` is the usage card's state (usageview.js's `usageSection`), `pending` the pending changes'
 * (`pendingSection`), `dependents` the flags that require this one.
 */
function content(ctx, route, usage, pending, dependents) {
    const set = ctx.store.state.set;
    const key = route.key;
    const flag = set && set.flags[key];
    if (!flag || typeof flag !== 'object') {
        return h('div', null, h('h2', { tabindex: '-1' }, key),
            h('p', { class: 'empty', testid: 'flag-missing' }, `There is no flag ${key} in ${route.set} (version ${set ? set.version : '?'}).`),
            h('p', null, h('a', { href: hashFor({ name: 'flags', set: route.set }) }, 'Back to the flags')));
    }
    const now = Date.now();
    const can = ctx.perms().flagActions;
    const actions = flagActions(ctx, route.set, key);
    const states = flagStates(flag, now);
    const expiry = expiryText(flag.expiresAt, now);
    const { prerequisites, rules } = prerequisitesAndRules(flag);
    const choices = enumChoices(flag);

    const toolbar = can ? h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Flag actions' },
        flag.killed === true
            ? actionButton('action-restore', 'Restore', () => actions.restore())
            : actionButton('action-kill', 'Kill', () => actions.kill(), { danger: true }),
        actionButton('action-default', 'Change default', () => actions.setDefault()),
        flag.type === 'string' ? actionButton('action-values', 'Edit values', () => actions.editValues()) : null,
        actionButton('action-expire', 'Expire', () => actions.expire()),
        flag.archived === true
            ? actionButton('action-unarchive', 'Unarchive', () => actions.unarchive())
            : actionButton('action-archive', 'Archive', () => actions.archive()),
        actionButton('action-delete', 'Delete', () => actions.remove(), { danger: true })) : null;

    const notices = [];
    if (flag.killed === true) notices.push(h('p', { class: 'notice killed' }, 'Killed: everyone gets the kill value ', valueCode(flag.killValue), '.'));
    if (expiry.state === 'expired' && flag.archived !== true) {
        notices.push(h('p', { class: 'notice expired' }, `Expired ${relativeTime(flag.expiresAt, now)}: everyone gets `, valueCode(flag.expiredValue),
            '. Remove it from the code, then archive it.'));
    }

    return h('div', { class: 'flag-detail' },
        h('div', { class: 'flag-title' },
            h('h2', { tabindex: '-1' }, h('code', null, key)),
            h('span', { class: `badge state-${states[0].replace(' ', '-')}`, testid: 'state-badge' }, states[0]),
            states.slice(1).map((state) => h('span', { class: `badge subtle state-${state.replace(' ', '-')}` }, state))),
        typeof flag.description === 'string' && flag.description !== '' ? h('p', { class: 'description', testid: 'flag-description' }, flag.description) : null,
        notices,
        toolbar,
        h('dl', { class: 'meta' },
            definition('Type', flag.type ?? '?'),
            choices ? definition('Values', h('span', { testid: 'flag-values' }, choices.map((value, index) => [index ? ', ' : null, valueCode(value)]))) : null,
            definition('Kind', flag.kind ?? '?'),
            definition('Owner', flag.owner ?? '—'),
            definition('Default', valueCode(flag.default)),
            definition('Kill value', valueCode(flag.killValue)),
            definition('Expires', flag.expiresAt
                ? h('span', { class: expiry.state === 'expired' ? 'expiry expired' : 'expiry' }, `${expiry.text} (${formatUTC(flag.expiresAt)})`)
                : 'never'),
            flag.expiresAt ? definition('After expiry', valueCode(flag.expiredValue)) : null,
            definition('Order', h('span', { class: 'muted' }, 'kill → expiry → prerequisites → unit overrides → cohort overrides → rules → rollout → default'))),
        prerequisitesSection(route.set, prerequisites, dependents, can, actions),
        overridesSection(flag, now, can, actions),
        rulesSection(rules, can, actions),
        rolloutSection(flag, now, can, actions, pending),
        pendingSection(pending, route, now),
        usageSection(usage, key, now),
        h('p', { class: 'links' },
            h('a', { href: hashFor({ name: 'evaluate', set: route.set, query: { key } }), testid: 'flag-evaluate' }, 'Evaluate this flag'),
            ' · ',
            h('a', { href: hashFor({ name: 'history', set: route.set, query: { key } }) }, 'History of this flag'),
            ' · ',
            h('a', { href: hashFor({ name: 'flags', set: route.set }) }, 'All flags')));
}

/** The flag screen of `route.set` / `route.key`. */
export function render(ctx, route) {
    const body = h('div');
    const node = h('section', { class: 'screen' }, setHeader(ctx, route), body);
    // Loaded once per visit: what clients report changes by the minute, not with each version of the set.
    let usage = { status: 'loading' };
    let pending = { status: 'loading' };
    let disposed = false;
    /** The flags that require this one as last drawn: a patch of another flag may change them. */
    let dependents = [];
    const dependentsChanged = () => dependentsOf(ctx.store.state.set.flags, route.key).join('\n') !== dependents.join('\n');
    function draw() {
        dependents = dependentsOf(ctx.store.state.set?.flags, route.key);
        const focused = focusKey();
        replaceChildren(body, content(ctx, route, usage, pending, dependents));
        // Kill turns into Restore: when the focused control is gone, focus goes to the flag's heading.
        if (focused && !restoreFocus(body, focused)) body.querySelector('h2')?.focus();
    }
    async function loadPending() {
        try {
            const answer = await ctx.api.get('listChanges', { set: route.set }, { state: 'open,approved,scheduled' });
            const changes = (answer.json.changes || []).filter((change) => (change.flags || []).some((item) => item.key === route.key));
            pending = { status: 'ready', changes };
        } catch (error) {
            if (error.status === 401) return;
            pending = { status: 'failed', changes: [] };
        }
        if (disposed) return;
        // Only the card, as for usage: a redraw would move focus away from where the person is.
        const card = body.querySelector('[data-testid="flag-pending"]');
        if (card) card.replaceWith(pendingSection(pending, route, Date.now()));
        const chart = body.querySelector('[data-testid="rollout-chart-box"]');
        const rollout = ctx.store.state.set?.flags?.[route.key]?.rollout;
        if (chart && rollout && typeof rollout === 'object') chart.replaceWith(chartBox(rollout, Date.now(), pending));
    }
    ctx.onDispose(ctx.store.subscribe((change) => {
        if (change.topic !== 'set' || !ctx.store.state.set) return;
        if (change.reset || (change.flags || []).includes(route.key) || (change.removedFlags || []).includes(route.key)
            || (change.cohorts || []).length || dependentsChanged()) {
            draw();
            loadPending();
        }
    }));
    ctx.onDispose(() => {
        disposed = true;
    });
    draw();
    loadPending();
    loadUsage(ctx.api, route.set, route.key).then(
        (model) => ({ status: 'ready', model }),
        (error) => ({ status: 'failed', error })).then((state) => {
        if (disposed || state.error?.status === 401) return;
        usage = state;
        // Only the card: redrawing the screen would move focus away from where the person is.
        const card = body.querySelector('[data-testid="usage-card"]');
        if (card) card.replaceWith(usageSection(usage, route.key, Date.now()));
    });
    return { node, title: `${route.key} · ${route.set}` };
}
