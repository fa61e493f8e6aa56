// The actions on one flag's screen, each a dialog and then a request through `ctx.actions`: kill and restore; its
// default, enum values, rules, prerequisites, overrides, rollout and expiry; archive, delete and unarchive. Every
// action writes the set, so its dialog offers to propose it as a change request instead (docs/reviews.md).

import { enumValues, fieldProblems, valueField, valueTexts } from '/ui/authoring.js';
import { formDialog, reviewOf } from '/ui/dialog.js';
import { enumChoices } from '/ui/flagmodel.js';
import { inputText, overrideTarget, parseConditions, valueText } from '/ui/format.js';
import { showPropagation } from '/ui/propagationview.js';
import { hashFor } from '/ui/router.js';
import { localInputToISO } from '/ui/time.js';

/** The dialogs and requests of every flag action, for the flag `key` of the open set. */
export function flagActions(ctx, setName, key) {
    const params = { set: setName, key };
    const flag = () => ctx.store.state.set.flags[key];
    // Every action writes the set: its dialog offers to propose it instead (docs/reviews.md).
    // Kills and restores are never held for review: they offer proposing, never demand it.
    const ask = async (spec, { exempt = false } = {}) => formDialog({ ...spec, review: exempt ? true : await ctx.reviewMode(setName) });
    const run = (options, values) => ctx.actions.run({ ...options, review: reviewOf(values) });
    const reasonQuery = (reason, extra = {}) => ({ ...extra, reason: reason || undefined });

    return {
        async kill() {
            const values = await ask({
                title: `Kill ${key}?`,
                description: `Everyone gets the kill value ${valueText(flag().killValue)} at once, open sessions included, until someone restores the flag.`,
                reason: 'required', confirmLabel: 'Kill', danger: true,
            }, { exempt: true });
            if (!values) return;
            const answer = await run({ endpoint: 'kill', params, body: { reason: values.reason }, ifMatch: false, done: (a) => `Killed ${key} (version ${a.version}).` }, values);
            if (answer && answer.changed !== false) await showPropagation(ctx, { set: setName, key, version: answer.version });
        },
        async restore() {
            const values = await ask({
                title: `Restore ${key}?`, description: 'The flag serves its default and targeting again.',
                reason: 'required', confirmLabel: 'Restore',
            }, { exempt: true });
            if (values) await run({ endpoint: 'restore', params, body: { reason: values.reason }, ifMatch: false, done: (a) => `Restored ${key} (version ${a.version}).` }, values);
        },
        async setDefault() {
            const f = flag();
            const values = await ask({
                title: `Change the default of ${key}`, confirmLabel: 'Change default',
                fields: [valueField(f, { name: 'value', label: `Default value (${f.type})`, value: inputText(f.default, f.type), required: true, testid: 'value-input', hint: f.type === 'string' ? 'The text itself, without quotes.' : 'true/false, a number, or JSON, as the flag\'s type reads it.' })],
            });
            if (values) await run({ endpoint: 'setDefault', params, body: { valueText: values.value, reason: values.reason || undefined }, done: (a) => `Changed the default of ${key} (version ${a.version}).` }, values);
        },
        async editValues() {
            const current = enumChoices(flag()) ?? [];
            await ask({
                title: `Values of ${key}`, confirmLabel: 'Save values',
                description: 'The only values the flag may serve, in the order apps list them. A value it still serves (its default, a rule\'s, …) must stay.',
                fields: [{ name: 'values', label: 'Values, one per line', type: 'textarea', rows: Math.max(3, Math.min(12, current.length + 1)), value: current.join('\n'),
                    required: true, testid: 'values-input', hint: 'Up to 64 values of up to 64 characters each.' }],
                check: (v) => {
                    const listed = enumValues(v.values);
                    if (listed.error) return [{ field: 'values', message: listed.error }];
                    return listed.values.length ? [] : [{ field: 'values', message: 'Write at least one value.' }];
                },
                submit: (v) => run({
                    endpoint: 'putValues', params, body: { values: enumValues(v.values).values, reason: v.reason || undefined },
                    done: (a) => `Changed the values of ${key} (version ${a.version}).`,
                    problemsAt: (error) => fieldProblems(error, { prefixes: [`flags.${key}`], fields: { values: 'values' }, fallback: 'values' }),
                }, v),
            });
        },
        async addRule() {
            const f = flag();
            const cohorts = Object.keys(ctx.store.state.set.cohorts).sort();
            const values = await ask({
                title: `Add a rule to ${key}`, confirmLabel: 'Add rule',
                description: 'The rule goes last: rules are tried in order, after overrides.',
                fields: [
                    { name: 'name', label: 'Name (optional)', testid: 'rule-name-input', hint: 'Without a name the server names it after its cohort.' },
                    { name: 'target', label: 'Who', type: 'radio', testid: 'rule-target', value: cohorts.length ? 'cohort' : 'conditions',
                        options: [{ value: 'cohort', label: 'A cohort' }, { value: 'conditions', label: 'Conditions' }] },
                    { name: 'cohort', label: 'Cohort', type: 'select', options: cohorts, testid: 'cohort-select', when: (v) => v.target === 'cohort', required: true },
                    { name: 'conditions', label: 'Conditions, one per line (all must match)', type: 'textarea', testid: 'conditions-input',
                        placeholder: 'country in DE,AT\nappVersion semver_gte 5.2.0', when: (v) => v.target === 'conditions', required: true },
                    { name: 'serve', label: 'Serves', type: 'radio', testid: 'rule-serve', value: 'value',
                        options: [{ value: 'value', label: 'A value' }, { value: 'rollout', label: 'A value to a percent of them' }] },
                    { name: 'percent', label: 'Percent', type: 'number', min: '0', max: '100', step: '0.01', testid: 'percent-input', when: (v) => v.serve === 'rollout', required: true },
                    valueField(f, { name: 'value', label: `Value (${f.type})`, required: true, testid: 'value-input', value: f.type === 'bool' ? 'true' : '' }),
                ],
            });
            if (!values) return;
            const rule = {};
            if (values.name) rule.name = values.name;
            if (values.target === 'cohort') {
                rule.cohort = values.cohort;
            } else {
                const parsed = parseConditions(values.conditions);
                if (parsed.errors) {
                    ctx.notices.error({ message: 'The rule was not added: a condition could not be read.', problems: parsed.errors.map((message) => ({ path: 'conditions', message })) });
                    return;
                }
                rule.conditions = parsed.conditions;
            }
            if (values.serve === 'rollout') rule.rollout = { percent: Number(values.percent), valueText: values.value };
            else rule.valueText = values.value;
            await run({ endpoint: 'addRule', params, body: { rule, reason: values.reason || undefined }, done: (a) => `Added a rule to ${key} (version ${a.version}).` }, values);
        },
        async removeRule(name) {
            const values = await ask({ title: `Remove rule ${name} from ${key}?`, confirmLabel: 'Remove rule', danger: true });
            if (values) await run({ endpoint: 'removeRule', params: { ...params, name }, query: reasonQuery(values.reason), done: (a) => `Removed rule ${name} from ${key} (version ${a.version}).` }, values);
        },
        async addPrerequisite() {
            const flags = ctx.store.state.set.flags;
            // The server refuses an archived prerequisite: only the flags it would take are offered.
            const others = Object.keys(flags).filter((other) => other !== key && flags[other].archived !== true).sort();
            const isBool = (v) => flags[v.flag]?.type === 'bool';
            const isEnum = (v) => enumChoices(flags[v.flag]) !== null;
            const choicesOf = (v) => v[`choices:${v.flag}`] || [];
            // One set of choices per enum flag, shown while it is the flag chosen.
            const choiceFields = others.filter((other) => enumChoices(flags[other])).map((other) => ({
                name: `choices:${other}`, label: 'Serving one of', type: 'checkboxes', options: enumChoices(flags[other]),
                testid: 'prerequisite-values-input', when: (v) => v.flag === other,
            }));
            const values = await ask({
                title: `Add a prerequisite to ${key}`, confirmLabel: 'Add prerequisite',
                description: `Only units that the required flag serves one of the values get ${key}'s overrides, rules and rollout; the others get its default. `
                    + 'For a flag it already requires, the values replace those listed.',
                fields: [
                    { name: 'flag', label: 'Requires the flag', type: 'select', required: true, testid: 'prerequisite-flag-select',
                        options: others.map((other) => ({ value: other, label: `${other} (${flags[other].type})` })) },
                    { name: 'bool', label: 'Serving', type: 'radio', testid: 'prerequisite-values-input', value: 'true', when: isBool,
                        options: [{ value: 'true', label: 'true' }, { value: 'false', label: 'false' }] },
                    ...choiceFields,
                    { name: 'values', label: 'Serving one of', required: true, testid: 'prerequisite-values-input', when: (v) => !isBool(v) && !isEnum(v),
                        hint: 'One or more values separated by commas, read as the required flag\'s type (a string without quotes).' },
                ],
                check: (v) => {
                    if (isEnum(v)) return choicesOf(v).length ? [] : [{ field: `choices:${v.flag}`, message: 'Choose at least one value.' }];
                    return isBool(v) || valueTexts(v.values).length ? [] : [{ field: 'values', message: 'Write at least one value.' }];
                },
            });
            if (!values) return;
            const valuesText = isBool(values) ? [values.bool] : isEnum(values) ? choicesOf(values) : valueTexts(values.values);
            const body = { valuesText, reason: values.reason || undefined };
            await run({ endpoint: 'putPrerequisite', params: { ...params, name: values.flag }, body, done: (a) => `${key} requires ${values.flag} (version ${a.version}).` }, values);
        },
        async removePrerequisite(required) {
            const values = await ask({
                title: `Remove the prerequisite ${required} from ${key}?`, confirmLabel: 'Remove prerequisite', danger: true,
                description: `${key} no longer depends on what ${required} serves.`,
            });
            if (values) await run({ endpoint: 'removePrerequisite', params: { ...params, name: required }, query: reasonQuery(values.reason), done: (a) => `${key} no longer requires ${required} (version ${a.version}).` }, values);
        },
        async addOverride() {
            const f = flag();
            const cohorts = Object.keys(ctx.store.state.set.cohorts).sort();
            const values = await ask({
                title: `Override ${key}`, confirmLabel: 'Add override',
                description: 'A forced value for one unit or one cohort; it replaces an override for the same unit or cohort.',
                fields: [
                    { name: 'target', label: 'For', type: 'radio', testid: 'override-target', value: 'unit',
                        options: [{ value: 'unit', label: 'A unit' }, { value: 'cohort', label: 'A cohort' }] },
                    { name: 'unit', label: 'Unit id', testid: 'unit-input', when: (v) => v.target === 'unit', required: true },
                    { name: 'cohort', label: 'Cohort', type: 'select', options: cohorts, testid: 'cohort-select', when: (v) => v.target === 'cohort', required: true },
                    valueField(f, { name: 'value', label: `Value (${f.type})`, required: true, testid: 'value-input', value: f.type === 'bool' ? 'true' : '' }),
                    { name: 'for', label: 'For how long (optional)', testid: 'duration-input', placeholder: '2h', hint: 'A duration such as 90m, 2h, 7d; empty for no end.' },
                ],
            });
            if (!values) return;
            const body = { valueText: values.value, reason: values.reason || undefined };
            if (values.target === 'unit') body.unit = values.unit;
            else body.cohort = values.cohort;
            if (values.for) body.for = values.for;
            await run({ endpoint: 'addOverride', params, body, done: (a) => `Added an override to ${key} (version ${a.version}).` }, values);
        },
        async removeOverride(override) {
            const who = overrideTarget(override);
            const values = await ask({ title: `Remove the override for ${who}?`, confirmLabel: 'Remove override', danger: true });
            if (!values) return;
            const target = typeof override.unit === 'string' ? { unit: override.unit } : { cohort: override.cohort };
            await run({ endpoint: 'removeOverride', params, query: reasonQuery(values.reason, target), done: (a) => `Removed the override for ${who} (version ${a.version}).` }, values);
        },
        async setRollout() {
            const f = flag();
            const current = f.rollout && typeof f.rollout === 'object' ? f.rollout : null;
            const values = await ask({
                title: `Roll out ${key}`, confirmLabel: 'Set rollout',
                description: 'Replaces the flag-level rollout. Units inside at a percent stay inside at every higher percent.',
                fields: [
                    { name: 'mode', label: 'How', type: 'radio', testid: 'rollout-mode', value: 'percent',
                        options: [{ value: 'percent', label: 'A fixed percent' }, { value: 'apple', label: 'Apple phased release: 1, 2, 5, 10, 20, 50, 100 % over 7 days' }] },
                    { name: 'percent', label: 'Percent', type: 'number', min: '0', max: '100', step: '0.01', testid: 'percent-input',
                        value: current && typeof current.percent === 'number' ? String(current.percent) : '', when: (v) => v.mode === 'percent', required: true },
                    { name: 'start', label: 'Start (optional, your local time)', type: 'datetime-local', testid: 'start-input', when: (v) => v.mode === 'apple', hint: 'Empty: now.' },
                    valueField(f, { name: 'value', label: `Value served inside the rollout (${f.type})`, required: true, testid: 'value-input',
                        value: current ? inputText(current.value, f.type) : (f.type === 'bool' ? 'true' : '') }),
                ],
            });
            if (!values) return;
            const body = { valueText: values.value, reason: values.reason || undefined };
            if (values.mode === 'apple') {
                body.preset = 'apple';
                const start = localInputToISO(values.start || '');
                if (start) body.start = start;
            } else {
                body.percent = Number(values.percent);
            }
            await run({ endpoint: 'putRollout', params, body, done: (a) => `Set the rollout of ${key} (version ${a.version}).` }, values);
        },
        async pauseRollout() {
            const values = await ask({ title: `Pause the rollout of ${key}?`, description: 'The percent stays where it is now until resumed.', confirmLabel: 'Pause' });
            if (values) await run({ endpoint: 'pauseRollout', params, body: { reason: values.reason || undefined }, done: (a) => `Paused the rollout of ${key} (version ${a.version}).` }, values);
        },
        async resumeRollout() {
            const values = await ask({ title: `Resume the rollout of ${key}?`, description: 'The remaining steps move later by the time spent paused.', confirmLabel: 'Resume' });
            if (values) await run({ endpoint: 'resumeRollout', params, body: { reason: values.reason || undefined }, done: (a) => `Resumed the rollout of ${key} (version ${a.version}).` }, values);
        },
        async removeRollout() {
            const values = await ask({ title: `Remove the rollout of ${key}?`, confirmLabel: 'Remove rollout', danger: true });
            if (values) await run({ endpoint: 'removeRollout', params, query: reasonQuery(values.reason), done: (a) => `Removed the rollout of ${key} (version ${a.version}).` }, values);
        },
        async expire() {
            const f = flag();
            const keep = f.expiredValue !== undefined ? f.expiredValue : f.default;
            const values = await ask({
                title: `Expire ${key}`, confirmLabel: 'Set expiry',
                description: 'From the expiry on, everyone gets the kept value; then remove the flag from the code and archive it.',
                fields: [
                    valueField(f, { name: 'keep', label: `Value kept after expiry (${f.type})`, value: inputText(keep, f.type), required: true, testid: 'keep-input' }),
                    { name: 'at', label: 'When (optional, your local time)', type: 'datetime-local', testid: 'at-input', hint: 'Empty: now.' },
                ],
            });
            if (!values) return;
            const body = { keepText: values.keep, reason: values.reason || undefined };
            const at = localInputToISO(values.at || '');
            if (at) body.at = at;
            await run({ endpoint: 'expire', params, body, done: (a) => `Set the expiry of ${key} (version ${a.version}).` }, values);
        },
        async archive() {
            const values = await ask({ title: `Archive ${key}?`, description: 'An archived flag is not served: clients fall back to their compiled-in default.', confirmLabel: 'Archive', danger: true });
            if (values) await run({ endpoint: 'archive', params, body: { reason: values.reason || undefined }, done: (a) => `Archived ${key} (version ${a.version}).` }, values);
        },
        async remove() {
            const values = await ask({
                title: `Delete ${key}?`, confirmLabel: 'Delete flag', danger: true,
                description: 'The flag leaves the set: clients fall back to their compiled-in default. The history keeps it.',
            });
            if (!values) return;
            const deleted = await ctx.actions.run({
                endpoint: 'deleteFlag', params, query: reasonQuery(values.reason), review: reviewOf(values),
                done: (a) => `Deleted ${key} (version ${a.version}).`,
            });
            if (deleted && deleted.changeRequest === undefined) location.hash = hashFor({ name: 'flags', set: setName });
        },
        async unarchive() {
            const values = await ask({ title: `Unarchive ${key}?`, confirmLabel: 'Unarchive' });
            if (values) await run({ endpoint: 'unarchive', params, body: { reason: values.reason || undefined }, done: (a) => `Unarchived ${key} (version ${a.version}).` }, values);
        },
    };
}
