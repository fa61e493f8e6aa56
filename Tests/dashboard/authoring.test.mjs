import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dashboardModule } from './dashboard-modules.mjs';

const {
    COHORT_FIELDS, FLAG_FIELDS, cohortFormValues, cohortFromForm, enumValues, fieldProblems, flagFromForm, typedValue, valueField,
    valueTexts,
} = await dashboardModule('authoring.js');

test('a typed value is read as the flag\'s type, or says why not', () => {
    assert.deepEqual(typedValue('true', 'bool'), { value: true });
    assert.deepEqual(typedValue(' 42 ', 'int'), { value: 42 });
    assert.deepEqual(typedValue('1.5', 'double'), { value: 1.5 });
    assert.deepEqual(typedValue(' keep spaces ', 'string'), { value: ' keep spaces ' });
    assert.deepEqual(typedValue('{"columns":2}', 'json'), { value: { columns: 2 } });
    assert.match(typedValue('yes', 'bool').error, /not true or false/);
    assert.match(typedValue('4.2', 'int').error, /not a whole number/);
    assert.match(typedValue('9007199254740993', 'int').error, /not a whole number/);
    assert.match(typedValue('{', 'json').error, /not JSON/);
});

test('values typed in one field are split at commas and trimmed', () => {
    assert.deepEqual(valueTexts(' green, blue ,,'), ['green', 'blue']);
    assert.deepEqual(valueTexts('true'), ['true']);
    assert.deepEqual(valueTexts(' , '), []);
    assert.deepEqual(valueTexts(undefined), []);
});

test('a new flag is the document\'s JSON, with only what was given', () => {
    const built = flagFromForm({
        key: 'dark-mode', type: 'bool', kind: 'ops', default: 'false', killValue: '', description: ' Night theme ',
        owner: '', expiresAt: '2027-01-01T00:00:00.000Z',
    });
    assert.deepEqual(built, {
        key: 'dark-mode',
        flag: { type: 'bool', kind: 'ops', default: false, description: 'Night theme', expiresAt: '2027-01-01T00:00:00.000Z' },
    });
    assert.deepEqual(flagFromForm({ key: 'n', type: 'int', kind: 'ops', default: '3', killValue: '0' }).flag,
        { type: 'int', kind: 'ops', default: 3, killValue: 0 });
});

test('a flag form with problems names each at its path', () => {
    const built = flagFromForm({ key: 'Bad Key', type: 'int', kind: 'ops', default: 'x', killValue: 'y' });
    assert.deepEqual(built.errors.map((error) => error.path), ['key', 'flags.Bad Key.default', 'flags.Bad Key.killValue']);
});

test('a cohort\'s form reads lists and condition groups, and its values round-trip', () => {
    const values = {
        name: 'beta', description: 'early users', include: 'u-1\nu-2, u-3', exclude: '',
        conditions: 'country in DE,AT\nplan eq pro\nor\nemail ends_with @example.com',
    };
    const built = cohortFromForm(values);
    assert.deepEqual(built, {
        name: 'beta',
        cohort: {
            description: 'early users', include: ['u-1', 'u-2', 'u-3'],
            groups: [
                [{ attribute: 'country', op: 'in', values: ['DE', 'AT'] }, { attribute: 'plan', op: 'eq', values: ['pro'] }],
                [{ attribute: 'email', op: 'ends_with', values: ['@example.com'] }],
            ],
        },
    });
    assert.deepEqual(cohortFromForm(cohortFormValues('beta', built.cohort)), built);
    const bad = cohortFromForm({ name: 'qa', conditions: 'country frobs DE' });
    assert.equal(bad.errors[0].path, 'cohorts.qa.groups[0]');
    assert.match(bad.errors[0].message, /unknown operator frobs/);
});

test('the server\'s refusal of a form lands at the fields it names', () => {
    const flag = { prefixes: ['flags.beta', 'flag'], fields: FLAG_FIELDS, fallback: 'key' };
    const refusal = (status, code, problems, path = null) => ({ status, code, message: 'refused', path, problems });
    assert.deepEqual(fieldProblems(refusal(409, 'already_exists', []), flag), [{ field: 'key', message: 'refused' }]);
    assert.deepEqual(fieldProblems(refusal(422, 'invalid', [
        { path: 'flags.beta.default', message: 'must be a bool' },
        { path: 'flags.beta.rules[0].conditions[1]', message: 'unknown cohort' },
        { path: 'flag.killValue', message: 'must be a bool' },
        { path: 'cohorts.vip', message: 'in_cohort cycle' },
        { path: 'propose', message: 'too long' },
    ]), flag), [
        { field: 'default', message: 'must be a bool' },
        { field: 'key', message: 'flags.beta.rules[0].conditions[1]: unknown cohort' },
        { field: 'killValue', message: 'must be a bool' },
        { field: 'key', message: 'cohorts.vip: in_cohort cycle' },
        { field: 'proposeTitle', message: 'too long' },
    ]);
    // Without a list of problems, the error's own path and message.
    assert.deepEqual(fieldProblems(refusal(400, 'bad_request', [], 'flag.expiresAt'), flag), [{ field: 'expiresAt', message: 'refused' }]);
    const cohort = { prefixes: ['cohorts.vip', 'cohort'], fields: COHORT_FIELDS, fallback: 'name' };
    assert.deepEqual(fieldProblems(refusal(422, 'invalid', [{ path: 'cohorts.vip.groups[0][1].cohort', message: 'no cohort "gone"' }]), cohort),
        [{ field: 'conditions', message: 'groups[0][1].cohort: no cohort "gone"' }]);
    // What no field can show stays in the banner.
    for (const error of [refusal(409, 'conflict', []), refusal(403, 'forbidden', []), refusal(422, 'incompatible_clients', [])]) {
        assert.deepEqual(fieldProblems(error, flag), []);
    }
});

test('an enum flag\'s values are read one per line, or at commas on one line when the form allows it', () => {
    assert.deepEqual(enumValues(' blue \n\ndark mode\na,b\n'), { values: ['blue', 'dark mode', 'a,b'] });
    assert.deepEqual(enumValues('blue, green'), { values: ['blue, green'] }, 'one per line: a comma is part of the value');
    assert.deepEqual(enumValues('blue, green ,', { commas: true }), { values: ['blue', 'green'] });
    assert.deepEqual(enumValues('a,b\nc', { commas: true }), { values: ['a,b', 'c'] }, 'several lines: one per line');
    assert.deepEqual(enumValues('blue\ngreen\nblue'), { error: '"blue" is listed twice' });
    assert.deepEqual(enumValues(''), { values: [] });
});

test('a new string flag may list its values; its default and kill value must be among them', () => {
    const form = { key: 'theme', type: 'string', kind: 'ops', values: 'blue, green', default: 'blue', killValue: 'green' };
    assert.deepEqual(flagFromForm(form), {
        key: 'theme', flag: { type: 'string', kind: 'ops', values: ['blue', 'green'], default: 'blue', killValue: 'green' },
    });
    assert.deepEqual(flagFromForm({ ...form, default: 'pink', killValue: '' }).errors,
        [{ field: 'default', path: 'flags.theme.default', message: '"pink" is not one of the values' }]);
    assert.deepEqual(flagFromForm({ ...form, values: 'blue\nblue' }).errors,
        [{ field: 'values', path: 'flags.theme.values', message: '"blue" is listed twice' }]);
    assert.deepEqual(flagFromForm({ ...form, type: 'int', default: '1', killValue: '' }).errors,
        [{ field: 'values', path: 'flags.theme.values', message: 'only a string flag lists its values' }]);
    assert.equal(flagFromForm({ ...form, values: ' ' }).flag.values, undefined, 'no values: any string');
    assert.equal(FLAG_FIELDS.values, 'values');
});

test('a dialog asks for a value of an enum flag as a choice among its values, and for any other as text', () => {
    const text = { name: 'value', label: 'Value', value: 'green', testid: 'value-input', hint: 'The text itself.' };
    const theme = { type: 'string', values: ['blue', 'green'] };
    assert.deepEqual(valueField(theme, text), { ...text, type: 'select', options: ['blue', 'green'], hint: undefined, placeholder: undefined });
    assert.equal(valueField(theme, { ...text, value: '' }).value, 'blue', 'not one of them: the first');
    assert.equal(valueField({ type: 'string' }, text), text);
    assert.equal(valueField({ type: 'bool', values: ['true'] }, text), text);
    assert.equal(valueField({ type: 'string', values: [] }, text), text);
});
