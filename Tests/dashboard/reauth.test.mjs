import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dashboardModule } from './dashboard-modules.mjs';
import { CONFIRM_HEADER, confirmHeaders, isReauthenticationRefusal } from '../../Sources/FlagServer/Dashboard/reauth.js';

const { createApi } = await dashboardModule('api.js');
const { createEndpoints } = await dashboardModule('endpoints.js');
const endpoints = createEndpoints(JSON.parse(readFileSync(new URL('endpoints.json', import.meta.url), 'utf8')));

test('the own token goes in Flagstaff-Confirm-Token, trimmed, and nothing goes without one', () => {
    assert.equal(CONFIRM_HEADER, 'Flagstaff-Confirm-Token');
    assert.deepEqual(confirmHeaders(' fsa_abc \n'), { 'Flagstaff-Confirm-Token': 'fsa_abc' });
    assert.deepEqual(confirmHeaders(''), {});
    assert.deepEqual(confirmHeaders('   '), {});
    assert.deepEqual(confirmHeaders(undefined), {});
    assert.deepEqual(confirmHeaders(null), {});
});

test('only a 403 about the own token keeps the prompt open for another try', () => {
    assert.equal(isReauthenticationRefusal({ status: 403, code: 'reauthentication_failed' }), true);
    assert.equal(isReauthenticationRefusal({ status: 403, code: 'reauthentication_required' }), true);
    assert.equal(isReauthenticationRefusal({ status: 403, code: 'forbidden' }), false);
    assert.equal(isReauthenticationRefusal({ status: 401, code: 'unauthorized' }), false);
    assert.equal(isReauthenticationRefusal({ status: 409, code: 'already_exists' }), false);
    assert.equal(isReauthenticationRefusal(null), false);
});

/** An API client over a fake fetch that answers `status` with `body`; `sent` holds every request. */
function fakeApi(status, body) {
    const sent = [];
    let session = 'fsa_session';
    const unauthorized = [];
    const api = createApi({
        fetchImpl: async (url, init) => {
            sent.push({ url, init });
            return {
                ok: status >= 200 && status < 300,
                status,
                text: async () => JSON.stringify(body),
                headers: { get: () => null },
            };
        },
        tokens: { get: () => session, set: (token) => { session = token; }, clear: () => { session = null; } },
        onUnauthorized: (error) => unauthorized.push(error),
        endpoints,
    });
    return { api, sent, unauthorized, session: () => session };
}

test('the API module sends the own token in its header, beside the session token, in that request only', async () => {
    const { api, sent } = fakeApi(201, { name: 'web', token: 'fss_new' });
    await api.call('createKey', { set: 'demo' }, { body: { name: 'web' }, ownToken: 'fsa_person' });
    await api.get('listKeys', { set: 'demo' });
    assert.equal(sent[0].url, '/v1/admin/sets/demo/keys');
    assert.equal(sent[0].init.method, 'POST');
    assert.equal(sent[1].init.method, 'GET');
    assert.equal(sent[0].init.headers['Flagstaff-Confirm-Token'], 'fsa_person');
    assert.equal(sent[0].init.headers.Authorization, 'Bearer fsa_session');
    assert.equal(sent[1].init.headers['Flagstaff-Confirm-Token'], undefined);
    assert.ok(!sent[0].url.includes('fsa_person'), 'the own token never goes into a URL');
    assert.ok(!sent[0].init.body.includes('fsa_person'), 'nor into the body');
});

test('a refused own token is a 403 that keeps the session and does not sign out', async () => {
    const { api, unauthorized, session } = fakeApi(403, { error: {
        code: 'reauthentication_failed', message: 'the token in Flagstaff-Confirm-Token is not the one this session was made from',
    } });
    await assert.rejects(
        api.call('revokeToken', { name: 'bob' }, { ownToken: 'fsa_wrong' }),
        (error) => error.status === 403 && error.code === 'reauthentication_failed' && isReauthenticationRefusal(error),
    );
    assert.equal(session(), 'fsa_session');
    assert.deepEqual(unauthorized, []);
});
