import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dashboardModule } from './dashboard-modules.mjs';

const { cohortFormValues, cohortFromForm, flagFromForm, typedValue } = await dashboardModule('authoring.js');

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
