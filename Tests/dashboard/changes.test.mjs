import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decisionsFor, permissions } from '../../Sources/FlagServer/Dashboard/roles.js';
import { createEndpoints } from '../../Sources/FlagServer/Dashboard/endpoints.js';
import { hashFor, parseHash } from '../../Sources/FlagServer/Dashboard/router.js';
import { readFileSync } from 'node:fs';

const endpoints = createEndpoints(JSON.parse(readFileSync(new URL('./endpoints.json', import.meta.url))));
const names = (change, role, person) =>
    decisionsFor(change, { perms: permissions(role, endpoints), person }).map(([endpoint]) => endpoint);

test('the changes screen has a route of its own', () => {
    assert.deepEqual(parseHash('#/sets/demo/changes'), { name: 'changes', set: 'demo', query: {} });
    assert.equal(hashFor({ name: 'changes', set: 'demo' }), '#/sets/demo/changes');
});

test('an editor approves another person\'s open request, never their own, and withdraws only their own', () => {
    const open = { state: 'open', author: 'alice' };
    assert.deepEqual(names(open, 'editor', 'bob'), ['approveChange', 'applyChange', 'rejectChange']);
    assert.deepEqual(names(open, 'editor', 'alice'), ['applyChange', 'rejectChange', 'withdrawChange']);
    assert.deepEqual(names(open, 'admin', 'carol'), ['approveChange', 'applyChange', 'rejectChange', 'withdrawChange']);
});

test('a viewer decides nothing, and nobody decides on a request that is done', () => {
    assert.deepEqual(names({ state: 'open', author: 'alice' }, 'viewer', 'vera'), []);
    for (const state of ['applied', 'rejected', 'withdrawn', 'failed']) {
        assert.deepEqual(names({ state, author: 'alice' }, 'admin', 'carol'), [], state);
    }
    assert.deepEqual(names({ state: 'scheduled', author: 'alice' }, 'editor', 'bob'), ['applyChange', 'rejectChange']);
});

test('the endpoint table marks the writes of a set, which may be proposed', () => {
    const table = JSON.parse(readFileSync(new URL('./endpoints.json', import.meta.url)));
    assert.equal(table.endpoints.kill.writesSet, true);
    assert.equal(table.endpoints.putCohort.writesSet, true);
    assert.equal(table.endpoints.createKey.writesSet, false);
    assert.equal(table.endpoints.approveChange.writesSet, false);
});
