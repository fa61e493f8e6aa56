import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
    actionVerb, changeSentence, conditionText, inputText, overrideTarget, parseCondition, parseConditions, percentText,
    ruleServe, ruleTarget, valueText,
} from '../../Sources/FlagServer/Dashboard/format.js';

test('values are JSON text; inputs are what the server reads by type', () => {
    assert.equal(valueText(true), 'true');
    assert.equal(valueText('blue'), '"blue"');
    assert.equal(valueText({ columns: 2 }), '{"columns":2}');
    assert.equal(valueText(undefined), '—');
    assert.equal(inputText('blue', 'string'), 'blue');
    assert.equal(inputText(42, 'int'), '42');
    assert.equal(inputText({ a: 1 }, 'json'), '{"a":1}');
    assert.equal(inputText('x', 'json'), '"x"');
    assert.equal(inputText(null, 'bool'), '');
});

test('rules, conditions and overrides read as sentences', () => {
    assert.equal(conditionText({ attribute: 'country', op: 'in', values: ['DE', 'AT'] }), 'country in DE, AT');
    assert.equal(conditionText({ attribute: 'email', op: 'exists', values: [] }), 'email exists');
    assert.equal(ruleTarget({ cohort: 'beta' }), 'cohort beta');
    assert.equal(ruleTarget({ conditions: [] }), 'everyone');
    assert.equal(ruleTarget({ conditions: [{ attribute: 'a', op: 'eq', values: ['1'] }, { attribute: 'b', op: 'gt', values: ['2'] }] }),
        'a eq 1 and b gt 2');
    assert.equal(ruleServe({ value: true }), 'true');
    assert.equal(ruleServe({ rollout: { percent: 50, value: true } }), '50 % get true');
    assert.equal(ruleServe({ split: [{ name: 'control', value: 'blue', weight: 34 }, { value: 'green', weight: 66 }] }),
        'split control 34 % "blue", 66 % "green"');
    assert.equal(overrideTarget({ unit: 'u-9' }), 'unit u-9');
    assert.equal(overrideTarget({ cohort: 'qa' }), 'cohort qa');
    assert.equal(percentText(2.5), '2.5 %');
    assert.equal(percentText(10), '10 %');
});

test('change sentences for the toast and the history', () => {
    assert.equal(changeSentence({ actor: 'alice', action: 'flag.kill', subject: 'new-checkout', reason: 'payment errors' }),
        'alice killed new-checkout: payment errors');
    assert.equal(changeSentence({ actor: 'bob', action: 'flag.default', subject: 'api-rate-limit' }),
        'bob changed the default of api-rate-limit');
    assert.equal(changeSentence({ actor: 'bob', action: 'set.rollback', subject: 'demo', reason: 'bad import' }),
        'bob rolled back the set: bad import');
    assert.equal(changeSentence({ actor: 'carol', action: 'flag.frobnicate', subject: 'x' }), 'carol flag.frobnicate x');
    assert.equal(actionVerb('flag.rollout.pause'), 'paused the rollout of');
    assert.equal(changeSentence({ actor: 'alice', action: 'flag.prerequisite.set', subject: 'express-checkout', reason: 'with the new checkout' }),
        'alice set a prerequisite of express-checkout: with the new checkout');
    assert.equal(actionVerb('flag.prerequisite.remove'), 'removed a prerequisite from');
    assert.equal(changeSentence({ actor: 'alice', action: 'flag.values.set', subject: 'checkout-theme' }),
        'alice set the values of checkout-theme');
    assert.equal(actionVerb('flag.values.remove'), 'dropped the list of values of');
});

test('conditions typed as flagctl --where takes them', () => {
    assert.deepEqual(parseCondition('country in DE, AT'), { condition: { attribute: 'country', op: 'in', values: ['DE', 'AT'] } });
    assert.deepEqual(parseCondition('appVersion semver_gte 5.2.0'), { condition: { attribute: 'appVersion', op: 'semver_gte', values: ['5.2.0'] } });
    assert.deepEqual(parseCondition('email exists'), { condition: { attribute: 'email', op: 'exists', values: [] } });
    assert.deepEqual(parseCondition('path matches ^/a{1,3}$'), { condition: { attribute: 'path', op: 'matches', values: ['^/a{1,3}$'] } });
    assert.match(parseCondition('country is DE').error, /unknown operator is/);
    assert.match(parseCondition('country in').error, /needs a value/);
    assert.match(parseCondition('email exists yes').error, /takes no value/);
    assert.match(parseCondition('country').error, /ATTRIBUTE OP VALUE/);
    assert.deepEqual(parseConditions('country eq DE\n\n platform eq ios \n'), {
        conditions: [{ attribute: 'country', op: 'eq', values: ['DE'] }, { attribute: 'platform', op: 'eq', values: ['ios'] }],
    });
    assert.equal(parseConditions('a eq 1\nb bad 2\nc').errors.length, 2);
});
