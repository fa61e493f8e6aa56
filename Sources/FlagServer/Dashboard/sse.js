// A parser of the `text/event-stream` format (WHATWG HTML, "Server-sent events") and the reconnection delay of
// the live stream. Pure: feed it text as it arrives, split anywhere, and it returns what became complete.
//
// The dashboard reads the stream with fetch() because EventSource cannot send an Authorization header; the
// caller decodes bytes with `TextDecoder(..., {stream: true})`, so a UTF-8 sequence split between chunks arrives
// whole here.

const CR = 13;
const LF = 10;

/**
 * Items returned by `feed`:
 * - `{type: 'event', event, data, id}`: `event` is `message` when the stream named none, `data` the data lines
 *   joined with `\n`, `id` the last id seen on the stream (it persists across events);
 * - `{type: 'comment', text}`: a comment line such as `: heartbeat` (text without the colon and one space);
 * - `{type: 'retry', ms}`: a valid `retry:` field.
 */
export class SSEParser {
    /** A parser that keeps at most `maxLineLength` characters of one line (a hostile stream cannot grow it). */
    constructor(maxLineLength = 16 * 1024 * 1024) {
        this.maxLineLength = maxLineLength;
        this.line = '';
        this.afterCR = false;
        this.started = false;
        this.eventType = '';
        this.dataLines = [];
        this.lastEventId = null;
    }

    /** Consumes a chunk of text and returns the items it completed, in order. */
    feed(text) {
        const items = [];
        let start = 0;
        if (!this.started && text.length > 0) {
            this.started = true;
            if (text.charCodeAt(0) === 0xfeff) start = 1;
        }
        for (let i = start; i < text.length; i++) {
            const code = text.charCodeAt(i);
            if (this.afterCR) {
                this.afterCR = false;
                if (code === LF) {
                    start = i + 1;
                    continue;
                }
            }
            if (code === CR || code === LF) {
                this.append(text.slice(start, i));
                this.processLine(this.line, items);
                this.line = '';
                start = i + 1;
                this.afterCR = code === CR;
            }
        }
        this.append(text.slice(start));
        return items;
    }

    /** Forgets a partial line and event, as on a new connection; the last event id is kept. */
    reset() {
        this.line = '';
        this.afterCR = false;
        this.started = false;
        this.eventType = '';
        this.dataLines = [];
    }

    append(part) {
        if (part === '' || this.line.length >= this.maxLineLength) return;
        this.line += part.slice(0, this.maxLineLength - this.line.length);
    }

    processLine(line, items) {
        if (line === '') {
            if (this.dataLines.length > 0) {
                items.push({
                    type: 'event',
                    event: this.eventType || 'message',
                    data: this.dataLines.join('\n'),
                    id: this.lastEventId,
                });
            }
            this.eventType = '';
            this.dataLines = [];
            return;
        }
        if (line.charCodeAt(0) === 58 /* : */) {
            items.push({ type: 'comment', text: line.slice(line.startsWith(': ') ? 2 : 1) });
            return;
        }
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        switch (field) {
            case 'event':
                this.eventType = value;
                break;
            case 'data':
                this.dataLines.push(value);
                break;
            case 'id':
                if (!value.includes('\0')) this.lastEventId = value;
                break;
            case 'retry':
                if (/^\d+$/.test(value)) items.push({ type: 'retry', ms: Number(value) });
                break;
            default:
                break;
        }
    }
}

/**
 * How long to wait before reconnection attempt `attempt` (0 for the first after a loss): 1 s doubling up to
 * 30 s, with up to a quarter more at random so that many dashboards do not reconnect in step. `random` is
 * Math.random's shape, passed in so tests can fix it.
 */
export function reconnectDelay(attempt, random = Math.random) {
    const base = Math.min(30_000, 1000 * 2 ** Math.min(attempt, 15));
    return Math.round(base + base * 0.25 * random());
}
