import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dashboardModule } from './dashboard-modules.mjs';

const { EVENT_TYPES, checkWebhookForm, deliveryRow, hookStatus, pollDelay, webhookBody, webhookProblems, webhookRow } = await dashboardModule('webhooks.js');
const { errorInfo } = await dashboardModule('errors.js');

// A WebhookInfo as `GET /v1/admin/webhooks` answers it.
const hook = {
    name: 'chat', url: 'https://hooks.example.com/flagstaff', sets: ['ios-prod', 'web-prod'], events: ['version.created'],
    format: 'slack', description: 'the #flags channel', createdBy: 'root', createdAt: '2026-12-06T10:00:00Z', pending: 2,
};

test('a hook\'s row names its sets and events, or every one of them', () => {
    assert.deepEqual(webhookRow(hook), {
        name: 'chat', url: 'https://hooks.example.com/flagstaff', format: 'slack', sets: 'ios-prod, web-prod',
        events: 'version.created', pending: 2, state: 'enabled', status: 'enabled', description: 'the #flags channel',
        createdBy: 'root', createdAt: '2026-12-06T10:00:00Z', previousSecretUntil: null,
    });
    const everything = webhookRow({ name: 'all', url: 'https://x.example/h', format: 'json', createdBy: 'root', createdAt: '2026-12-06T10:00:00Z', pending: 0 });
    assert.equal(everything.sets, 'every set');
    assert.equal(everything.events, 'every event');
    assert.equal(everything.description, '');
    assert.equal(webhookRow({ ...hook, sets: [], events: [] }).sets, 'every set', 'an empty list covers everything too');
});

test('a disabled hook says why; one without a reason says so', () => {
    assert.deepEqual(hookStatus(hook), { state: 'enabled', text: 'enabled' });
    const gone = { ...hook, disabledAt: '2026-12-06T11:00:00Z', disabledReason: 'the receiver answered 410 Gone' };
    assert.deepEqual(hookStatus(gone), { state: 'disabled', text: 'disabled: the receiver answered 410 Gone' });
    assert.equal(webhookRow(gone).status, 'disabled: the receiver answered 410 Gone');
    assert.equal(hookStatus({ ...hook, disabledAt: '2026-12-06T11:00:00Z' }).text, 'disabled: no reason given');
    assert.equal(webhookRow({ ...hook, previousSecretUntil: '2026-12-07T10:00:00Z' }).previousSecretUntil, '2026-12-07T10:00:00Z');
});

test('a delivery\'s row: a set or a dash, the last status as text, the next attempt only while pending', () => {
    const pending = {
        id: 'msg_1', type: 'webhook.test', createdAt: '2026-12-06T10:00:00Z', state: 'pending', attempts: 2,
        nextAttemptAt: '2026-12-06T10:05:00Z', lastStatus: 503, lastError: 'the receiver answered 503',
    };
    assert.deepEqual(deliveryRow(pending), {
        id: 'msg_1', type: 'webhook.test', set: '—', createdAt: '2026-12-06T10:00:00Z', state: 'pending', attempts: 2,
        nextAttemptAt: '2026-12-06T10:05:00Z', lastStatus: '503', lastError: 'the receiver answered 503', finishedAt: null,
    });
    const delivered = deliveryRow({
        id: 'msg_2', type: 'version.created', set: 'ios-prod', createdAt: '2026-12-06T10:00:00Z', state: 'delivered',
        attempts: 1, nextAttemptAt: '2026-12-06T10:00:00Z', lastStatus: 200, finishedAt: '2026-12-06T10:00:01Z',
    });
    assert.equal(delivered.set, 'ios-prod');
    assert.equal(delivered.nextAttemptAt, null, 'a finished delivery has no next attempt');
    assert.equal(delivered.lastStatus, '200');
    assert.equal(delivered.lastError, '');
    assert.equal(delivered.finishedAt, '2026-12-06T10:00:01Z');
    const unanswered = deliveryRow({ id: 'msg_3', type: 'key.created', createdAt: '2026-12-06T10:00:00Z', state: 'failed', attempts: 9, lastError: 'connection refused' });
    assert.equal(unanswered.lastStatus, '—');
});

test('the screen asks again soon for a delivery that is due, around the next attempt of one that is not, never for none', () => {
    const now = Date.parse('2026-12-06T10:00:00Z');
    const pending = (nextAttemptAt) => ({ id: 'm', type: 'webhook.test', state: 'pending', attempts: 0, nextAttemptAt });
    const delivered = { id: 'd', type: 'webhook.test', state: 'delivered', attempts: 1 };
    assert.equal(pollDelay([], now), null);
    assert.equal(pollDelay(undefined, now), null);
    assert.equal(pollDelay([delivered], now), null);
    assert.equal(pollDelay([pending('2026-12-06T10:00:00Z')], now), 3000, 'a test event just queued is due now');
    assert.equal(pollDelay([pending('2026-12-06T09:59:00Z')], now), 3000, 'overdue: the sender is about to try');
    assert.equal(pollDelay([pending('2026-12-06T10:00:20Z')], now), 21000, 'a second after the next attempt');
    assert.equal(pollDelay([pending('2026-12-06T14:00:00Z')], now), 60000, 'backing off for hours: once a minute');
    assert.equal(pollDelay([pending('2026-12-06T14:00:00Z'), pending('2026-12-06T10:00:05Z'), delivered], now), 6000, 'the earliest');
    assert.equal(pollDelay([pending(undefined)], now), 3000);
    assert.equal(pollDelay([pending('2026-12-06T10:00:20Z')], now, { min: 1000, max: 10000 }), 10000);
});

test('the request leaves out what the form left empty: no set is every set, no event every event', () => {
    assert.deepEqual(webhookBody({ name: ' chat ', url: ' https://hooks.example.com/h ', sets: [], events: [], format: 'json', description: '', reason: '' }), {
        name: 'chat', url: 'https://hooks.example.com/h', format: 'json',
    });
    assert.deepEqual(webhookBody({
        name: 'chat', url: 'https://hooks.example.com/h', sets: ['ios-prod'], events: ['change.opened', 'change.applied'],
        format: 'slack', description: ' the #flags channel ', reason: 'on-call wants kills in chat',
    }), {
        name: 'chat', url: 'https://hooks.example.com/h', sets: ['ios-prod'], events: ['change.opened', 'change.applied'],
        format: 'slack', description: 'the #flags channel', reason: 'on-call wants kills in chat',
    });
    assert.equal(webhookBody({ name: 'x', url: 'https://h.example', format: 'xml' }).format, 'json');
});

test('the form offers every event type the server knows, in its order', () => {
    assert.equal(EVENT_TYPES.length, 12); // the same as FlagAPI's WebhookEventType (WebhookPartsTests)
    assert.equal(EVENT_TYPES[0], 'version.created');
    assert.equal(EVENT_TYPES.at(-1), 'webhook.test');
    assert.equal(new Set(EVENT_TYPES).size, EVENT_TYPES.length);
});

test('the form checks the name and the address; a limited admin must tick a set', () => {
    const good = { name: 'chat', url: 'https://hooks.example.com/h', sets: [] };
    assert.deepEqual(checkWebhookForm(good), []);
    assert.deepEqual(checkWebhookForm({ ...good, url: 'http://10.0.0.5:8080/h' }), [], 'a private address is the server\'s to refuse');
    assert.deepEqual(checkWebhookForm({ ...good, name: 'Chat!', url: 'ftp://hooks.example.com/h' }).map((p) => p.field), ['name', 'url']);
    assert.deepEqual(checkWebhookForm({ ...good, url: 'hooks.example.com' }).map((p) => p.field), ['url']);
    assert.deepEqual(checkWebhookForm({ ...good, name: '' }).map((p) => p.field), ['name']);
    assert.deepEqual(checkWebhookForm({ ...good, name: 'a'.repeat(129) }).map((p) => p.field), ['name']);
    assert.deepEqual(checkWebhookForm(good, { limited: true }).map((p) => p.field), ['sets']);
    assert.deepEqual(checkWebhookForm({ ...good, sets: ['ios-prod'] }, { limited: true }), []);
});

test('the server\'s refusal goes under the field its path names, the path kept where it says more', () => {
    // A private address on a server without --allow-private-webhooks (400, path "url").
    const privateURL = errorInfo(400, { error: { code: 'bad_request', message: '"url": 127.0.0.1 is a loopback address', path: 'url' } });
    assert.deepEqual(webhookProblems(privateURL), [{ field: 'url', message: '"url": 127.0.0.1 is a loopback address' }]);
    const event = errorInfo(400, { error: { code: 'bad_request', message: 'unknown event "flag.created"', path: 'events[1]' } });
    assert.deepEqual(webhookProblems(event), [{ field: 'events', message: 'events[1]: unknown event "flag.created"' }]);
    const set = errorInfo(404, { error: { code: 'not_found', message: 'no flag set "gone"', path: 'sets[0]' } });
    assert.deepEqual(webhookProblems(set), [{ field: 'sets', message: 'sets[0]: no flag set "gone"' }]);
    const taken = errorInfo(409, { error: { code: 'already_exists', message: 'a webhook named "chat" already exists' } });
    assert.deepEqual(webhookProblems(taken), [{ field: 'name', message: 'a webhook named "chat" already exists' }]);
    const noKey = errorInfo(503, { error: { code: 'unavailable', message: 'this server has no key-encryption key' } });
    assert.deepEqual(webhookProblems(noKey), [{ field: 'name', message: 'this server has no key-encryption key' }]);
    assert.deepEqual(webhookProblems(noKey, { fallback: 'url' })[0].field, 'url');
    const unknownPath = errorInfo(400, { error: { code: 'bad_request', message: 'not JSON', path: 'body' } });
    assert.deepEqual(webhookProblems(unknownPath), [{ field: 'name', message: 'body: not JSON' }]);
    assert.deepEqual(webhookProblems(errorInfo(401, { error: { code: 'unauthorized', message: 'session expired' } })), []);
});
