import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEndpoints, loadEndpoints } from '../../Sources/FlagServer/Dashboard/endpoints.js';
import { permissions } from '../../Sources/FlagServer/Dashboard/roles.js';

// The table as flagserver serves it at /ui/endpoints.json; FlagServerTests checks that this file is those bytes.
const table = JSON.parse(readFileSync(new URL('endpoints.json', import.meta.url), 'utf8'));
const endpoints = createEndpoints(table);

test('paths come from the templates, each parameter percent-encoded', () => {
    assert.equal(endpoints.method('kill'), 'POST');
    assert.equal(endpoints.path('kill', { set: 'ios-prod', key: 'new-checkout' }), '/v1/admin/sets/ios-prod/flags/new-checkout/kill');
    assert.equal(endpoints.path('getCohort', { set: 'a b', name: 'q/a' }), '/v1/admin/sets/a%20b/cohorts/q%2Fa');
    assert.equal(endpoints.path('propagation', { set: 's', n: 7 }), '/v1/admin/sets/s/versions/7/propagation');
    assert.equal(endpoints.path('listSets'), '/v1/admin/sets');
    assert.equal(endpoints.method('revokeToken'), 'DELETE');
});

test('an unknown endpoint or a missing parameter is an error naming it', () => {
    assert.throws(() => endpoints.path('nope', {}), /no endpoint "nope"/);
    assert.throws(() => endpoints.path('kill', { set: 's' }), /"kill" needs the path parameter \{key\}/);
    assert.throws(() => endpoints.method('toString'), /no endpoint "toString"/);
    assert.throws(() => createEndpoints({}), /no "endpoints" object/);
});

test('a role may call what its rank reaches; the routes of clients are no role\'s', () => {
    assert.equal(endpoints.allows('listFlags', 'viewer'), true);
    assert.equal(endpoints.allows('kill', 'viewer'), false);
    assert.equal(endpoints.allows('kill', 'editor'), true);
    assert.equal(endpoints.allows('createToken', 'editor'), false);
    assert.equal(endpoints.allows('createToken', 'admin'), true);
    assert.equal(endpoints.allows('kill', 'owner'), false, 'an unknown role gets the least');
    assert.equal(endpoints.allows('document', 'admin'), false);
    assert.equal(endpoints.confirmsPerson('createKey'), true);
    assert.equal(endpoints.confirmsPerson('kill'), false);
});

test('permissions follow the least role of the endpoint each action sends', () => {
    const none = {
        flagActions: false, cohortActions: false, rollback: false, promote: false, keys: false, tokens: false, webhooks: false,
        changes: false, withdrawAny: false,
    };
    assert.deepEqual(permissions('viewer', endpoints), none);
    assert.deepEqual(permissions(undefined, endpoints), none);
    assert.deepEqual(permissions('editor', endpoints), { ...none, flagActions: true, cohortActions: true, rollback: true, promote: true, changes: true });
    assert.deepEqual(permissions('admin', endpoints), {
        flagActions: true, cohortActions: true, rollback: true, promote: true, keys: true, tokens: true, webhooks: true,
        changes: true, withdrawAny: true,
    });
    assert.deepEqual(permissions('owner', endpoints), none, 'a role this dashboard does not know gets the least');
});

test('the table is loaded from the server, and a failure says what failed', async () => {
    const served = await loadEndpoints(async (url) => {
        assert.equal(url, '/ui/endpoints.json');
        return { ok: true, status: 200, json: async () => table };
    });
    assert.equal(served.path('listTokens'), '/v1/admin/tokens');
    await assert.rejects(loadEndpoints(async () => ({ ok: false, status: 404 })), /answered \/ui\/endpoints.json with 404/);
    await assert.rejects(loadEndpoints(async () => { throw new TypeError('offline'); }), /cannot be reached/);
});
