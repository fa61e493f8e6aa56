import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashFor, parseHash } from '../../Sources/FlagServer/Dashboard/router.js';

test('hashes name screens', () => {
    assert.deepEqual(parseHash(''), { name: 'sets', query: {} });
    assert.deepEqual(parseHash('#/'), { name: 'sets', query: {} });
    assert.deepEqual(parseHash('#/signin'), { name: 'signin', query: {} });
    assert.deepEqual(parseHash('#/sets'), { name: 'sets', query: {} });
    assert.deepEqual(parseHash('#/sets/demo'), { name: 'flags', set: 'demo', query: {} });
    assert.deepEqual(parseHash('#/sets/demo/flags'), { name: 'flags', set: 'demo', query: {} });
    assert.deepEqual(parseHash('#/sets/demo/flags/new-checkout'), { name: 'flag', set: 'demo', key: 'new-checkout', query: {} });
    assert.deepEqual(parseHash('#/sets/demo/history'), { name: 'history', set: 'demo', query: {} });
    assert.deepEqual(parseHash('#/sets/demo/cohorts/beta'), { name: 'cohort', set: 'demo', cohort: 'beta', query: {} });
    assert.deepEqual(parseHash('#/sets/demo/audit?actor=alice'), { name: 'set-audit', set: 'demo', query: { actor: 'alice' } });
    assert.deepEqual(parseHash('#/sets/demo/flags?state=rolling%20out&q=x'),
        { name: 'flags', set: 'demo', query: { state: 'rolling out', q: 'x' } });
    assert.deepEqual(parseHash('#/audit'), { name: 'audit', query: {} });
    assert.deepEqual(parseHash('#/tokens'), { name: 'tokens', query: {} });
    assert.deepEqual(parseHash('#/webhooks'), { name: 'webhooks', query: {} });
    assert.deepEqual(parseHash('#/webhooks/chat'), { name: 'webhook', hook: 'chat', query: {} });
});

test('unknown and malformed hashes are notfound', () => {
    assert.equal(parseHash('#/nope').name, 'notfound');
    assert.equal(parseHash('#/sets/demo/nope').name, 'notfound');
    assert.equal(parseHash('#/sets/demo/history/3').name, 'notfound');
    assert.equal(parseHash('#/sets/demo/flags/a/b').name, 'notfound');
    assert.equal(parseHash('#/sets/%E0%A4%A/flags').name, 'notfound');
    assert.equal(parseHash('#/webhooks/chat/deliveries').name, 'notfound');
});

test('hashFor inverts parseHash, encoding segments', () => {
    const routes = [
        { name: 'flag', set: 'ios prod', key: 'a.b_c-d', query: {} },
        { name: 'cohort', set: 'demo', cohort: 'beta/ios', query: {} },
        { name: 'compare', set: 'demo', query: { with: 'staging' } },
        { name: 'set-audit', set: 'demo', query: {} },
        { name: 'sets', query: {} },
        { name: 'webhooks', query: {} },
        { name: 'webhook', hook: 'team.chat', query: {} },
    ];
    for (const route of routes) assert.deepEqual(parseHash(hashFor(route)), route);
    assert.equal(hashFor({ name: 'flag', set: 'demo', key: 'new-checkout' }), '#/sets/demo/flags/new-checkout');
    assert.equal(hashFor({ name: 'cohort', set: 'demo', cohort: 'beta/ios' }), '#/sets/demo/cohorts/beta%2Fios');
    assert.equal(hashFor({ name: 'webhook', hook: 'chat' }), '#/webhooks/chat');
});
