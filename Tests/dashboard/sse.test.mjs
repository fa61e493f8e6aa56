import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reconnectDelay, SSEParser } from '../../Sources/FlagServer/Dashboard/sse.js';

const stream = ': current\n\nevent: put\nid: 3\ndata: {"version":3,\ndata: "flags":{}}\n\n'
    + ': heartbeat\n\nevent: patch\nid: 4\ndata: {"version":4,"base":3}\n\n';

const expected = [
    { type: 'comment', text: 'current' },
    { type: 'event', event: 'put', id: '3', data: '{"version":3,\n"flags":{}}' },
    { type: 'comment', text: 'heartbeat' },
    { type: 'event', event: 'patch', id: '4', data: '{"version":4,"base":3}' },
];

test('events, ids, multi-line data and comments', () => {
    const parser = new SSEParser();
    assert.deepEqual(parser.feed(stream), expected);
    assert.equal(parser.lastEventId, '4');
});

test('chunks split at every position give the same items', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
        const parser = new SSEParser();
        const items = [...parser.feed(stream.slice(0, cut)), ...parser.feed(stream.slice(cut))];
        assert.deepEqual(items, expected, `split at ${cut}`);
    }
});

test('one character at a time', () => {
    const parser = new SSEParser();
    const items = [];
    for (const ch of stream) items.push(...parser.feed(ch));
    assert.deepEqual(items, expected);
});

test('CRLF and CR line endings, a CRLF split between chunks', () => {
    const text = 'event: patch\r\ndata: a\r\r\ndata: b\rid: 9\r\n\r\n';
    for (let cut = 0; cut <= text.length; cut++) {
        const parser = new SSEParser();
        const items = [...parser.feed(text.slice(0, cut)), ...parser.feed(text.slice(cut))];
        assert.deepEqual(items, [
            { type: 'event', event: 'patch', id: null, data: 'a' },
            { type: 'event', event: 'message', id: '9', data: 'b' },
        ], `split at ${cut}`);
    }
});

test('a UTF-8 sequence split between byte chunks arrives whole through a streaming decoder', () => {
    const bytes = new TextEncoder().encode('data: 😀 dark-mode\n\n');
    const decoder = new TextDecoder();
    const parser = new SSEParser();
    const items = [...parser.feed(decoder.decode(bytes.slice(0, 8), { stream: true })),
        ...parser.feed(decoder.decode(bytes.slice(8), { stream: true }))];
    assert.deepEqual(items, [{ type: 'event', event: 'message', id: null, data: '😀 dark-mode' }]);
});

test('field details: no space, no colon, unknown fields, retry, empty data, BOM', () => {
    const parser = new SSEParser();
    assert.deepEqual(parser.feed('\ufeffdata:x\nfoo: bar\nretry: 2500\nretry: soon\n\n'), [
        { type: 'retry', ms: 2500 },
        { type: 'event', event: 'message', id: null, data: 'x' },
    ]);
    assert.deepEqual(parser.feed('event: put\n\n'), [], 'an event without data is not dispatched');
    assert.deepEqual(parser.feed('data\n\n'), [{ type: 'event', event: 'message', id: null, data: '' }],
        'the type was reset by the blank line');
    assert.deepEqual(parser.feed('data:  two spaces\n\n')[0].data, ' two spaces', 'only one space is removed');
    assert.deepEqual(parser.feed(':no space\n'), [{ type: 'comment', text: 'no space' }]);
});

test('the id persists across events; reset keeps it and drops a partial event', () => {
    const parser = new SSEParser();
    parser.feed('id: 7\ndata: a\n\n');
    assert.deepEqual(parser.feed('data: b\n\n')[0].id, '7');
    parser.feed('event: patch\ndata: half');
    parser.reset();
    assert.equal(parser.lastEventId, '7');
    assert.deepEqual(parser.feed('data: c\n\n'), [{ type: 'event', event: 'message', id: '7', data: 'c' }]);
});

test('an overlong line is cut, not kept whole', () => {
    const parser = new SSEParser(10);
    const items = parser.feed(`data: ${'x'.repeat(100)}\n\n`);
    assert.equal(items[0].data, 'xxxx');
});

test('reconnection waits 1 s doubling to 30 s, plus up to a quarter at random', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 40].map((n) => reconnectDelay(n, () => 0)),
        [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    assert.equal(reconnectDelay(0, () => 1), 1250);
    assert.equal(reconnectDelay(5, () => 0.5), 33750);
});
