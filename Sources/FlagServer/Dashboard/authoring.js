// Flags and cohorts as the dashboard's forms write them: form values in, the document's JSON out (SPEC §3), or the
// problems, each with the form's field it concerns and the path the server would name. The server checks everything again; these checks only spare a
// round trip for what a form can see. Pure.

import { enumChoices } from '/ui/flagmodel.js';
import { conditionText, parseConditions } from '/ui/format.js';

/** The flag types and kinds the server knows (FlagCore's `FlagType.known`, `FlagKind.known`). */
export const FLAG_TYPES = ['bool', 'int', 'double', 'string', 'json'];
export const FLAG_KINDS = ['release', 'experiment', 'ops', 'kill-switch', 'permission'];

/** The text of a value typed into a form, read as a value of `type`: `{value}` or `{error}`. */
export function typedValue(text, type) {
    const trimmed = String(text ?? '').trim();
    switch (type) {
        case 'bool':
            if (trimmed === 'true' || trimmed === 'false') return { value: trimmed === 'true' };
            return { error: `is not true or false: "${trimmed}"` };
        case 'int':
            if (/^-?\d+$/.test(trimmed) && Number.isSafeInteger(Number(trimmed))) return { value: Number(trimmed) };
            return { error: `is not a whole number: "${trimmed}"` };
        case 'double':
            if (trimmed !== '' && Number.isFinite(Number(trimmed))) return { value: Number(trimmed) };
            return { error: `is not a number: "${trimmed}"` };
        case 'string':
            return { value: String(text ?? '') };
        case 'json':
            try {
                return { value: JSON.parse(trimmed) };
            } catch {
                return { error: 'is not JSON' };
            }
        default:
            return { error: `has an unknown type "${type}"` };
    }
}

/**
 * A new flag from the create form's values (`key`, `type`, `kind`, `values` of a string flag as `enumValues` reads
 * them, `default`, `killValue`, `description`, `owner`, `expiresAt` as an ISO time or empty): `{key, flag}` or
 * `{errors: [{path, message}]}`.
 */
export function flagFromForm(values) {
    const key = String(values.key ?? '').trim();
    const errors = [];
    const path = `flags.${key || '(key)'}`;
    if (!/^[a-z0-9][a-z0-9._-]{0,127}$/.test(key)) {
        errors.push({ field: 'key', path: 'key', message: 'a key is lower-case letters, digits, ".", "_" and "-", starting with a letter or digit' });
    }
    if (!FLAG_TYPES.includes(values.type)) errors.push({ field: 'type', path: `${path}.type`, message: `the type must be one of ${FLAG_TYPES.join(', ')}` });
    const flag = { type: values.type, kind: values.kind };
    const value = typedValue(values.default, values.type);
    if (value.error) errors.push({ field: 'default', path: `${path}.default`, message: `the default ${value.error}` });
    else flag.default = value.value;
    if (String(values.killValue ?? '').trim() !== '') {
        const kill = typedValue(values.killValue, values.type);
        if (kill.error) errors.push({ field: 'killValue', path: `${path}.killValue`, message: `the kill value ${kill.error}` });
        else flag.killValue = kill.value;
    }
    if (String(values.values ?? '').trim() !== '') {
        for (const error of listedValues(values.values, flag, path)) errors.push(error);
    }
    for (const member of ['description', 'owner']) {
        const text = String(values[member] ?? '').trim();
        if (text) flag[member] = text;
    }
    if (values.expiresAt) flag.expiresAt = values.expiresAt;
    return errors.length ? { errors } : { key, flag };
}

/**
 * The create form's values of an enum flag, set on `flag` (whose `type`, `default` and `killValue` are read): the
 * problems, `[{field, path, message}]`: a flag of another type, a value listed twice, a default or kill value not
 * listed.
 */
function listedValues(text, flag, path) {
    if (flag.type !== 'string') return [{ field: 'values', path: `${path}.values`, message: 'only a string flag lists its values' }];
    const listed = enumValues(text, { commas: true });
    if (listed.error) return [{ field: 'values', path: `${path}.values`, message: listed.error }];
    flag.values = listed.values;
    return ['default', 'killValue']
        .filter((member) => typeof flag[member] === 'string' && !listed.values.includes(flag[member]))
        .map((member) => ({ field: member, path: `${path}.${member}`, message: `"${flag[member]}" is not one of the values` }));
}

/**
 * The values of an enum flag as typed in a text area: one per line, each trimmed, empty lines left out; with
 * `commas`, a single line is split at its commas instead (`blue, green`). `{values}` or `{error}` for a value listed
 * twice.
 */
export function enumValues(text, { commas = false } = {}) {
    const raw = String(text ?? '');
    const parts = commas && !raw.includes('\n') ? raw.split(',') : raw.split('\n');
    const values = parts.map((value) => value.trim()).filter((value) => value !== '');
    const twice = values.find((value, index) => values.indexOf(value) !== index);
    return twice === undefined ? { values } : { error: `"${twice}" is listed twice` };
}

/**
 * A dialog's field for a value of `flag` (dialog.js's field spec): for an enum flag, a choice among its values,
 * starting at `spec.value` when it is one of them; for any other flag, `spec` as it is, a text field.
 */
export function valueField(flag, spec) {
    const choices = enumChoices(flag);
    if (!choices) return spec;
    const value = choices.includes(spec.value) ? spec.value : choices[0];
    return { ...spec, type: 'select', options: choices, value, hint: undefined, placeholder: undefined };
}

/**
 * The values typed into one field, separated by commas, as the texts a `valuesText` member carries: each trimmed,
 * empties left out (`green, blue` → `["green", "blue"]`).
 */
export function valueTexts(text) {
    return String(text ?? '').split(',').map((value) => value.trim()).filter((value) => value !== '');
}

/** A list typed one per line or separated by commas, without empties. */
function units(text) {
    return String(text ?? '').split(/[\n,]/).map((unit) => unit.trim()).filter((unit) => unit !== '');
}

/**
 * A cohort from the form's values (`name`, `description`, `include`, `exclude`, `conditions`: one condition per line,
 * all of a group must match, groups separated by a line `or`): `{name, cohort}` or `{errors: [{path, message}]}`.
 */
export function cohortFromForm(values) {
    const name = String(values.name ?? '').trim();
    const errors = [];
    if (!/^[a-z0-9][a-z0-9._-]{0,127}$/.test(name)) {
        errors.push({ field: 'name', path: 'name', message: 'a name is lower-case letters, digits, ".", "_" and "-", starting with a letter or digit' });
    }
    const cohort = {};
    const description = String(values.description ?? '').trim();
    if (description) cohort.description = description;
    const include = units(values.include);
    const exclude = units(values.exclude);
    if (include.length) cohort.include = include;
    if (exclude.length) cohort.exclude = exclude;
    const groups = [];
    const blocks = String(values.conditions ?? '').split(/^\s*or\s*$/m);
    for (const [index, block] of blocks.entries()) {
        if (block.trim() === '') continue;
        const parsed = parseConditions(block);
        if (parsed.errors) {
            for (const message of parsed.errors) errors.push({ field: 'conditions', path: `cohorts.${name}.groups[${index}]`, message });
        } else {
            groups.push(parsed.conditions);
        }
    }
    if (groups.length) cohort.groups = groups;
    return errors.length ? { errors } : { name, cohort };
}

/** The form's values for editing `cohort` (the inverse of cohortFromForm). */
export function cohortFormValues(name, cohort) {
    return {
        name,
        description: cohort.description ?? '',
        include: (cohort.include || []).join('\n'),
        exclude: (cohort.exclude || []).join('\n'),
        conditions: (cohort.groups || []).map((group) => group.map(conditionText).join('\n')).join('\nor\n'),
    };
}

/** The create flag form's field of each member of a flag that the server names in a refusal. */
export const FLAG_FIELDS = {
    type: 'type', kind: 'kind', values: 'values', default: 'default', killValue: 'killValue', description: 'description',
    owner: 'owner', expiresAt: 'expiresAt',
};

/** The cohort form's field of each member of a cohort that the server names in a refusal. */
export const COHORT_FIELDS = { description: 'description', include: 'include', exclude: 'exclude', groups: 'conditions' };

/**
 * The server's refusal of a form's write (an ApiError) as problems at the form's fields, `[{field, message}]`, or
 * none when the banner should show it. A problem at `flags.KEY.default` or at `flag.default` (the request's body)
 * goes to `fields.default`; one the fields do not name, and a taken key (409 `already_exists`), go to `fallback`,
 * the key or name field; `reason`, `propose` and `at` go to the reason and review fields. `prefixes` are the paths
 * of the item: `['flags.new-checkout', 'flag']`.
 */
export function fieldProblems(error, { prefixes, fields, fallback }) {
    // The request's own parameters, which every form with review fields has (dialog.js).
    const own = { reason: 'reason', propose: 'proposeTitle', at: 'proposeAt' };
    if (error.status === 409 && error.code === 'already_exists') return [{ field: fallback, message: error.message }];
    if ((error.status !== 400 && error.status !== 422) || error.code === 'incompatible_clients') return [];
    const problems = error.problems.length ? error.problems : [{ path: error.path ?? '', message: error.message }];
    return problems.map((problem) => {
        const path = problem.path ?? '';
        if (own[path]) return { field: own[path], message: problem.message };
        const prefix = prefixes.find((candidate) => path.startsWith(`${candidate}.`));
        const rest = prefix ? path.slice(prefix.length + 1) : '';
        const member = /^[A-Za-z]+/.exec(rest)?.[0];
        const field = member ? fields[member] : undefined;
        if (!field) return { field: fallback, message: path ? `${path}: ${problem.message}` : problem.message };
        return { field, message: rest === member ? problem.message : `${rest}: ${problem.message}` };
    });
}
