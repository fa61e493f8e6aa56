import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorInfo, errorLines, etagVersion, incompatibilityLines, networkErrorInfo } from '../../Sources/FlagServer/Dashboard/errors.js';
import { isPlainHTTPRemote } from '../../Sources/FlagServer/Dashboard/origin.js';

test('a 422 keeps every problem with its JSON path', () => {
    const info = errorInfo(422, { error: {
        code: 'invalid_flag_set', message: 'the flag set would be invalid: 2 problems', path: 'flags.x.rules[0].cohort',
        problems: [{ path: 'flags.x.rules[0].cohort', message: 'no cohort named beta' }, { path: 'flags.x.default', message: 'expected a bool value, found 3' }],
    } });
    assert.equal(info.code, 'invalid_flag_set');
    assert.deepEqual(errorLines(info), {
        message: 'the flag set would be invalid: 2 problems',
        problems: ['flags.x.rules[0].cohort: no cohort named beta', 'flags.x.default: expected a bool value, found 3'],
    });
});

test('a conflict carries the current version', () => {
    const info = errorInfo(409, { error: { code: 'conflict', message: 'the set is at version 44', currentVersion: 44 } });
    assert.equal(info.code, 'conflict');
    assert.equal(info.currentVersion, 44);
});

test('an answer without the error shape still says something', () => {
    const info = errorInfo(503, undefined);
    assert.equal(info.code, 'http_503');
    assert.match(info.message, /HTTP 503/);
    assert.deepEqual(info.problems, []);
    assert.equal(errorInfo(401, { error: { code: 'unauthorized', message: 'session expired' } }).message, 'session expired');
    assert.equal(networkErrorInfo().status, 0);
});

test('a refusal by the compatibility gate keeps its findings', () => {
    // The body FlagServer answers (docs/telemetry.md, "The compatibility gate").
    const message = 'operator "semver_gte" in flag "new-checkout" cannot be evaluated by 3 of 850 active instances '
        + '(0.35 %): FlagClient 1.2.0 (3). They will serve the flag\'s compiled-in default. Pass allowIncompatible=true '
        + '(flagctl --force) to write it anyway, or set the set\'s compatibility to warn.';
    const info = errorInfo(422, { error: {
        code: 'incompatible_clients', message, path: null, constructs: ['operator "semver_gte" in flag "new-checkout"'],
        lacking: 3, active: 850, sdks: [{ name: 'FlagClient', version: '1.2.0', instances: 3 }, { name: 7 }],
    } });
    assert.equal(info.code, 'incompatible_clients');
    assert.equal(info.message, message);
    assert.deepEqual(incompatibilityLines(info.incompatibility), {
        constructs: ['operator "semver_gte" in flag "new-checkout"'],
        share: '3 of 850 active instances (0.35 %)',
        sdks: ['FlagClient 1.2.0: 3'],
        apps: [],
    });
    assert.equal(errorInfo(422, { error: { code: 'invalid_flag_set', message: 'x' } }).incompatibility, null);
    assert.deepEqual(incompatibilityLines(errorInfo(422, { error: { code: 'incompatible_clients' } }).incompatibility),
        { constructs: [], share: '0 of 0 active instances (0.00 %)', sdks: [], apps: [] },
        'a body without findings still reads');
});

test('a refusal of a value apps read as an enum lacks names their app versions', () => {
    const info = errorInfo(422, { error: {
        code: 'incompatible_clients', message: 'value "orange" …', constructs: ['value "orange" in flag "checkout-theme"'],
        lacking: 1, active: 2, sdks: [{ name: 'FlagClient', version: '2.0.0', instances: 1 }],
        apps: [{ name: 'Shop', version: '5.2.0', instances: 1 }, { name: 'Shop' }, null],
    } });
    assert.deepEqual(incompatibilityLines(info.incompatibility), {
        constructs: ['value "orange" in flag "checkout-theme"'],
        share: '1 of 2 active instances (50.00 %)',
        sdks: ['FlagClient 2.0.0: 1'],
        apps: ['Shop 5.2.0: 1'],
    });
    assert.equal(networkErrorInfo().incompatibility, null);
});

test('ETag versions', () => {
    assert.equal(etagVersion('"43"'), 43);
    assert.equal(etagVersion('W/"7"'), 7);
    assert.equal(etagVersion('43'), null);
    assert.equal(etagVersion(null), null);
});

test('plain HTTP warns except on this machine', () => {
    assert.equal(isPlainHTTPRemote('http:', 'flags.example.com'), true);
    assert.equal(isPlainHTTPRemote('http:', '10.0.0.5'), true);
    assert.equal(isPlainHTTPRemote('https:', 'flags.example.com'), false);
    for (const host of ['localhost', '127.0.0.1', '[::1]', '::1', 'LOCALHOST']) assert.equal(isPlainHTTPRemote('http:', host), false, host);
});
