// Cohorts of a set: the list, and one cohort with its members, conditions and the flags that use it (the
// server's `usedBy`).

import { COHORT_FIELDS, cohortFormValues, cohortFromForm, fieldProblems } from '/ui/authoring.js';
import { formDialog, reviewOf } from '/ui/dialog.js';
import { h, replaceChildren } from '/ui/dom.js';
import { conditionText } from '/ui/format.js';
import { loadOnEachVersion, setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';

/**
 * Creates (no `name`) or replaces the cohort `name` of the open set from a dialog, which can propose the change
 * instead; goes to the cohort's screen once written.
 */
async function editCohort(ctx, setName, name, cohort) {
    const values = cohortFormValues(name ?? '', cohort ?? {});
    const written = await formDialog({
        title: name ? `Edit cohort ${name}` : 'New cohort', confirmLabel: name ? 'Save cohort' : 'Create cohort',
        review: await ctx.reviewMode(setName),
        description: 'A unit is in the cohort if it is included, or if it is not excluded and every condition of one group matches.',
        fields: [
            name ? null : { name: 'name', label: 'Name', required: true, testid: 'cohort-name-input', hint: 'Lower-case letters, digits, ".", "_" and "-".' },
            { name: 'description', label: 'Description', value: values.description, testid: 'cohort-description-input' },
            { name: 'include', label: 'Included units, one per line', type: 'textarea', value: values.include, testid: 'cohort-include-input' },
            { name: 'exclude', label: 'Excluded units, one per line', type: 'textarea', value: values.exclude, testid: 'cohort-exclude-input' },
            { name: 'conditions', label: 'Conditions, one per line; a line "or" starts another group', type: 'textarea', rows: 4,
                value: values.conditions, testid: 'cohort-conditions-input', placeholder: 'country in DE,AT\nor\nplan eq pro' },
        ].filter(Boolean),
        check: (form) => cohortFromForm({ ...form, name: name ?? form.name }).errors ?? [],
        submit: async (form) => {
            const built = cohortFromForm({ ...form, name: name ?? form.name });
            const answer = await ctx.actions.run({
                endpoint: 'putCohort', params: { set: setName, name: built.name }, body: { cohort: built.cohort, reason: form.reason || undefined },
                createOnly: !name, review: reviewOf(form),
                done: (a) => `${name ? 'Saved' : 'Created'} cohort ${built.name} (version ${a.version}).`,
                // Editing, the form has no name field: what the fields do not name goes to the description.
                problemsAt: (error) => fieldProblems(error, {
                    prefixes: [`cohorts.${built.name}`, 'cohort'], fields: COHORT_FIELDS, fallback: name ? 'description' : 'name',
                }),
            });
            return answer && !answer.problems ? { ...answer, name: built.name } : answer;
        },
    });
    if (written && written.changeRequest === undefined && !name) location.hash = hashFor({ name: 'cohort', set: setName, cohort: written.name });
}

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

/** The cohorts screen of `route.set`. */
export function render(ctx, route) {
    const setName = route.set;
    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading cohorts…');
    const create = ctx.perms().cohortActions
        ? h('div', { class: 'toolbar' }, h('button', { type: 'button', class: 'button', testid: 'cohort-create' }, 'New cohort'))
        : null;
    create?.querySelector('button').addEventListener('click', () => editCohort(ctx, setName, null, null));
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Cohorts'),
        create,
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
    loadOnEachVersion(ctx, load);
    return { node, title: `Cohorts · ${setName}` };
}

/** Deletes the cohort `name` (the server refuses while a flag uses it, naming the flag); can propose it instead. */
async function deleteCohort(ctx, setName, name) {
    const values = await formDialog({
        title: `Delete cohort ${name}?`, confirmLabel: 'Delete cohort', danger: true, review: await ctx.reviewMode(setName),
        description: 'A cohort that a flag still uses cannot be deleted: the server names the flag.',
    });
    if (!values) return;
    const deleted = await ctx.actions.run({
        endpoint: 'deleteCohort', params: { set: setName, name }, query: { reason: values.reason || undefined },
        review: reviewOf(values), done: (a) => `Deleted cohort ${name} (version ${a.version}).`,
    });
    if (deleted && deleted.changeRequest === undefined) location.hash = hashFor({ name: 'cohorts', set: setName });
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
            let toolbar = null;
            if (ctx.perms().cohortActions) {
                const editButton = h('button', { type: 'button', class: 'button', testid: 'cohort-edit' }, 'Edit');
                const deleteButton = h('button', { type: 'button', class: 'button danger', testid: 'cohort-delete' }, 'Delete');
                editButton.addEventListener('click', () => editCohort(ctx, setName, route.cohort, cohort));
                deleteButton.addEventListener('click', () => deleteCohort(ctx, setName, route.cohort));
                toolbar = h('div', { class: 'toolbar', role: 'group', 'aria-label': 'Cohort actions' }, editButton, deleteButton);
            }
            replaceChildren(body,
                toolbar,
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
    loadOnEachVersion(ctx, load);
    return { node, title: `${route.cohort} · ${setName}` };
}
