// Compare the open set with another: the flags and cohorts that differ, side by side, and promoting one flag's
// configuration from the other set into this one.

import { formDialog, reviewOf } from '/ui/dialog.js';
import { diffListElement } from '/ui/diffview.js';
import { h, replaceChildren } from '/ui/dom.js';
import { setHeader } from '/ui/layout.js';
import { hashFor } from '/ui/router.js';

/** The compare screen of `route.set`; `route.query.with` names the other set. */
export function render(ctx, route) {
    const setName = route.set;
    const other = route.query.with || '';
    const picker = h('select', { id: 'compare-with', testid: 'compare-with' }, h('option', { value: '' }, 'choose a set'));
    picker.addEventListener('change', () => {
        ctx.navigate(hashFor({ name: 'compare', set: setName, query: { with: picker.value } }));
    });
    const result = h('div', { class: 'compare-result', 'aria-live': 'polite' });
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Compare sets'),
        h('div', { class: 'filters' }, h('div', { class: 'field' }, h('label', { for: 'compare-with' }, `Compare ${setName} with`), picker)),
        result);

    function fillPicker(sets) {
        const names = sets.map((set) => set.name).filter((name) => name !== setName).sort();
        if (other && !names.includes(other)) names.push(other);
        picker.replaceChildren(h('option', { value: '' }, 'choose a set'),
            ...names.map((name) => h('option', { value: name, selected: name === other }, name)));
    }

    async function promote(key) {
        const values = await formDialog({
            title: `Promote ${key} from ${other} into ${setName}?`,
            description: `Copies the flag's configuration in ${other} over the one in ${setName}.`,
            confirmLabel: 'Promote', review: await ctx.reviewMode(setName),
            fields: [
                { name: 'withCohorts', label: `Also copy the cohorts it uses that ${setName} lacks`, type: 'checkbox', testid: 'promote-with-cohorts' },
                { name: 'withPrerequisites', label: `Also copy the flags it requires that ${setName} lacks`, type: 'checkbox', testid: 'promote-with-prerequisites' },
            ],
        });
        if (!values) return;
        const answer = await ctx.actions.run({
            endpoint: 'promote', params: { set: setName, key },
            body: { from: other, withCohorts: values.withCohorts, withPrerequisites: values.withPrerequisites, reason: values.reason || undefined },
            // The flags and cohorts copied along are not in the answer, which carries the promoted flag only.
            refetch: values.withCohorts || values.withPrerequisites, review: reviewOf(values),
            done: (a) => `Promoted ${key} from ${other} (version ${a.version}).`,
        });
        if (answer) load();
    }

    async function load() {
        if (!other) {
            replaceChildren(result, h('p', { class: 'hint' }, 'Choose a set to see the flags and cohorts that differ.'));
            return;
        }
        replaceChildren(result, h('p', { class: 'loading' }, `Comparing ${setName} with ${other}…`));
        try {
            const answer = await ctx.api.get('diff', { set: setName }, { with: other });
            const canPromote = ctx.perms().promote;
            const counted = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
            const flagCount = (answer.json.flags || []).length;
            const cohortCount = (answer.json.cohorts || []).length;
            replaceChildren(result,
                h('p', { testid: 'compare-count' }, `${counted(flagCount, 'flag')} and ${counted(cohortCount, 'cohort')} differ. Left: ${setName}; right: ${other}.`),
                diffListElement(answer.json, {
                    leftLabel: `${setName} (this set)`, rightLabel: other, testid: 'compare-diff',
                    wording: { onlyLeft: `only in ${setName}`, onlyRight: `only in ${other}` },
                    extraFor: (item) => {
                        if (!canPromote || item.kind !== 'flag' || item.after === null || item.after === undefined) return null;
                        const button = h('button', { type: 'button', class: 'button small', testid: 'action-promote', data: { item: item.name, flagKey: item.name } }, `Promote from ${other}`);
                        button.addEventListener('click', () => promote(item.name));
                        return button;
                    },
                }));
        } catch (error) {
            replaceChildren(result);
            if (error.status !== 401) ctx.notices.error(error);
        }
    }

    if (ctx.store.state.sets) fillPicker(ctx.store.state.sets);
    ctx.api.get('listSets').then((answer) => {
        ctx.store.setSets(answer.json.sets || []);
        fillPicker(answer.json.sets || []);
    }, (error) => {
        if (error.status !== 401) ctx.notices.error(error);
    });
    load();
    return { node, title: `Compare · ${setName}` };
}
