// Cohorts of a set: the list, and one cohort with its members, conditions and the flags that use it (the
// server's `usedBy`).

import { h, replaceChildren } from '/ui/dom.js';
import { conditionText } from '/ui/format.js';
import { setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';

function count(items) {
    return Array.isArray(items) ? items.length : 0;
}

/** `3 included, 1 excluded, 1 condition group`. */
function membership(cohort) {
    const parts = [];
    if (count(cohort.include)) parts.push(`${count(cohort.include)} included`);
    if (count(cohort.exclude)) parts.push(`${count(cohort.exclude)} excluded`);
    if (count(cohort.groups)) parts.push(`${count(cohort.groups)} condition group${count(cohort.groups) === 1 ? '' : 's'}`);
    return parts.length ? parts.join(', ') : 'nobody';
}

function flagLinks(setName, keys) {
    if (!Array.isArray(keys) || keys.length === 0) return h('span', { class: 'muted' }, 'no flag');
    return h('ul', { class: 'inline-list' }, keys.map((key) => h('li', null, h('a', { href: hashFor({ name: 'flag', set: setName, key }) }, key))));
}

/** Reloads the screen's data whenever the open set moves to a new version (the stream's changes). */
function onNewVersion(ctx, load) {
    let last = ctx.store.state.set?.version;
    ctx.onDispose(ctx.store.subscribe((change) => {
        const version = ctx.store.state.set?.version;
        if (change.topic === 'set' && version !== undefined && version !== last) {
            last = version;
            load();
        }
    }));
}

/** The cohorts screen of `route.set`. */
export function render(ctx, route) {
    const setName = route.set;
    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading cohorts…');
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Cohorts'),
        status,
        h('div', { class: 'table-scroll' }, h('table', { class: 'data stack' },
            h('thead', null, h('tr', null, ['Cohort', 'Description', 'Members', 'Used by'].map((name) => h('th', { scope: 'col' }, name)))),
            tbody)));

    async function load() {
        try {
            const answer = await ctx.api.get('listCohorts', { set: setName });
            const cohorts = answer.json.cohorts || {};
            const usedBy = answer.json.usedBy || {};
            const names = Object.keys(cohorts).sort();
            tbody.replaceChildren(...names.map((name) => {
                const cohort = cohorts[name] || {};
                return h('tr', { class: 'cohort-row', testid: 'cohort-row', data: { cohort: name } },
                    h('th', { scope: 'row', 'data-label': 'Cohort' }, h('a', { href: hashFor({ name: 'cohort', set: setName, cohort: name }) }, name)),
                    h('td', { 'data-label': 'Description' }, cohort.description ?? ''),
                    h('td', { 'data-label': 'Members' }, membership(cohort)),
                    h('td', { 'data-label': 'Used by' }, flagLinks(setName, usedBy[name])));
            }));
            status.hidden = names.length > 0;
            status.textContent = names.length ? '' : 'No cohorts in this set.';
        } catch (error) {
            status.textContent = 'Could not load the cohorts.';
            if (error.status !== 401) ctx.notices.error(error);
        }
    }
    onNewVersion(ctx, load);
    load();
    return { node, title: `Cohorts · ${setName}` };
}

function unitList(title, units, testid) {
    return h('section', { class: 'card' }, h('h3', null, `${title} (${count(units)})`),
        count(units) ? h('ul', { class: 'inline-list units', testid }, units.map((unit) => h('li', null, h('code', null, unit))))
            : h('p', { class: 'muted' }, 'none'));
}

/** One cohort: `route.set` / `route.cohort`. */
export function renderCohort(ctx, route) {
    const setName = route.set;
    const body = h('div', null, h('p', { class: 'loading' }, 'Loading the cohort…'));
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Cohort ', h('code', null, route.cohort)),
        body);

    async function load() {
        try {
            const answer = await ctx.api.get('getCohort', { set: setName, name: route.cohort });
            const cohort = answer.json.cohort || {};
            const groups = Array.isArray(cohort.groups) ? cohort.groups : [];
            replaceChildren(body,
                cohort.description ? h('p', { class: 'description' }, cohort.description) : null,
                h('p', { class: 'muted' }, 'A unit is in the cohort if it is included, or if it is not excluded and all conditions of any one group match.'),
                unitList('Included units', cohort.include, 'cohort-include'),
                unitList('Excluded units', cohort.exclude, 'cohort-exclude'),
                h('section', { class: 'card' }, h('h3', null, `Condition groups (${groups.length})`),
                    groups.length
                        ? h('ol', { class: 'groups' }, groups.map((group) => h('li', null, 'all of: ',
                            h('ul', null, (Array.isArray(group) ? group : []).map((condition) => h('li', null, h('code', null, conditionText(condition))))))))
                        : h('p', { class: 'muted' }, 'none')),
                h('section', { class: 'card', testid: 'cohort-used-by' }, h('h3', null, 'Used by'), flagLinks(setName, answer.json.usedBy)),
                h('p', null, h('a', { href: hashFor({ name: 'cohorts', set: setName }) }, 'All cohorts')));
        } catch (error) {
            replaceChildren(body, h('p', { class: 'empty' }, error.status === 404 ? `There is no cohort ${route.cohort} in ${setName}.` : 'Could not load the cohort.'));
            if (error.status !== 401 && error.status !== 404) ctx.notices.error(error);
        }
    }
    onNewVersion(ctx, load);
    load();
    return { node, title: `${route.cohort} · ${setName}` };
}
