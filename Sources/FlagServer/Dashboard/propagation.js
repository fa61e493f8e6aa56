// Whether a written version has reached the clients: `GET /v1/admin/sets/{set}/versions/{n}/propagation`
// (docs/telemetry.md) read for people in the words `flagctl --wait` prints, and the poll that follows it for the
// kill dialog. Pure: no DOM; the poller takes its clock and timers as arguments. This module imports nothing, so
// that node's test runner loads it as it is; the browser loads it as /ui/propagation.js.

/** How often the kill dialog asks, and for how long. */
export const POLL_INTERVAL_MS = 500;
export const POLL_TIMEOUT_MS = 30_000;

function count(value) {
    return Number.isInteger(value) && value >= 0 ? value : 0;
}

function software(value) {
    return value && typeof value === 'object' && typeof value.name === 'string' && typeof value.version === 'string'
        ? { name: value.name, version: value.version }
        : null;
}

/**
 * The propagation answer with every member checked: `{version, active, applied, p50Ms, p99Ms, written, silent,
 * lagging}`; `written` is `{streams, ms}` or null (another server wrote it, or it is too old), `p50Ms`/`p99Ms` null
 * before anyone applied it, each lagging instance `{id, sdk, app, version, lastSeen}` (ms or null).
 */
export function readPropagation(answer) {
    const body = answer && typeof answer === 'object' ? answer : {};
    const written = body.written && typeof body.written === 'object'
        ? { streams: count(body.written.streams), ms: Number.isFinite(body.written.ms) ? Math.max(0, body.written.ms) : 0 }
        : null;
    const lagging = (Array.isArray(body.lagging) ? body.lagging : [])
        .filter((instance) => instance && typeof instance.id === 'string')
        .map((instance) => ({
            id: instance.id,
            sdk: software(instance.sdk),
            app: software(instance.app),
            version: Number.isInteger(instance.version) ? instance.version : null,
            lastSeen: typeof instance.lastSeen === 'string' && Number.isFinite(Date.parse(instance.lastSeen)) ? Date.parse(instance.lastSeen) : null,
        }));
    return {
        version: count(body.version),
        active: count(body.active),
        applied: count(body.applied),
        p50Ms: Number.isFinite(body.p50Ms) ? body.p50Ms : null,
        p99Ms: Number.isFinite(body.p99Ms) ? body.p99Ms : null,
        written,
        silent: count(body.silent),
        lagging,
    };
}

function counted(amount, unit) {
    return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

/** `12 ms`, `0.4 ms`: as flagctl prints the fan-out. */
export function millisecondsText(ms) {
    return ms < 10 ? `${Math.round(ms * 10) / 10} ms` : `${Math.round(ms)} ms`;
}

/** `1.2 s`, cut (never rounded up) to a tenth, as flagctl prints waits. */
export function secondsText(ms) {
    const tenths = Math.floor(Math.max(0, ms) / 100);
    return `${Math.floor(tenths / 10)}.${tenths % 10} s`;
}

/** `99.1%` of `part/whole`, cut to a tenth, so that a share short of everyone never reads as 100%. */
export function shareText(part, whole) {
    if (whole <= 0) return '0%';
    const tenths = Math.floor((part * 1000) / whole);
    return tenths % 10 === 0 ? `${tenths / 10}%` : `${Math.floor(tenths / 10)}.${tenths % 10}%`;
}

/**
 * The line the kill dialog shows: `written to 850 streams in 12 ms; applied by 842 of 850 instances`, without
 * the first half when this server did not write the version itself.
 */
export function propagationSummary(propagation) {
    const applied = `applied by ${propagation.applied} of ${counted(propagation.active, 'instance')}`;
    if (!propagation.written) return applied;
    const { streams, ms } = propagation.written;
    return `written to ${counted(streams, 'stream')} in ${millisecondsText(ms)}; ${applied}`;
}

/**
 * Where a wait stands: `confirmed` once every active instance reports the version, `nobody` when no instance
 * reported in the last 5 minutes (nobody to wait for), `timeout` when `elapsedMs` reached `timeoutMs` first,
 * else `waiting`.
 */
export function propagationOutcome(propagation, elapsedMs, timeoutMs = POLL_TIMEOUT_MS) {
    if (propagation.active === 0) return 'nobody';
    if (propagation.applied >= propagation.active) return 'confirmed';
    return elapsedMs >= timeoutMs ? 'timeout' : 'waiting';
}

/** The sentence under the summary for an outcome, after `elapsedMs` of waiting. */
export function outcomeText(outcome, propagation, elapsedMs, timeoutMs = POLL_TIMEOUT_MS) {
    const version = `v${propagation.version}`;
    switch (outcome) {
    case 'confirmed': {
        const timing = propagation.p50Ms !== null && propagation.p99Ms !== null
            ? `; from commit to report p50 ${secondsText(propagation.p50Ms)}, p99 ${secondsText(propagation.p99Ms)} (server clock)`
            : '';
        return `Confirmed: every active instance reports ${version} or later${timing}.`;
    }
    case 'nobody':
        return `No instance reported in the last 5 minutes: nobody to wait for (${version}).`;
    case 'timeout':
        return `Not confirmed within ${secondsText(timeoutMs)}: ${propagation.applied} of `
            + `${counted(propagation.active, 'active instance')} (${shareText(propagation.applied, propagation.active)}) `
            + `report ${version}. The kill itself is written.`;
    default:
        return `Waiting for the clients to report ${version}… ${secondsText(elapsedMs)}`;
    }
}

/** `10:00:01 UTC (4 s ago)`: to the second, as propagation is a matter of seconds. */
export function seenText(lastSeen, now) {
    if (lastSeen === null) return '—';
    const time = `${new Date(lastSeen).toISOString().slice(11, 19)} UTC`;
    const ago = Math.round((now - lastSeen) / 1000);
    if (ago < 0) return time;
    return ago < 120 ? `${time} (${ago} s ago)` : `${time} (${Math.floor(ago / 60)} min ago)`;
}

/**
 * The lagging instances as table rows `{id, sdk, app, version, lastSeen}` of text, and how many more lag than the
 * server listed (it lists 100).
 */
export function laggingRows(propagation, now) {
    const rows = propagation.lagging.map((instance) => ({
        id: instance.id,
        sdk: instance.sdk ? `${instance.sdk.name} ${instance.sdk.version}` : '—',
        app: instance.app ? `${instance.app.name} ${instance.app.version}` : '—',
        version: instance.version === null ? 'none yet' : `v${instance.version}`,
        lastSeen: seenText(instance.lastSeen, now),
    }));
    const unlisted = Math.max(0, propagation.active - propagation.applied - rows.length);
    return { rows, unlisted };
}

/** The connections whose clients do not report, named rather than left out; empty text when there are none. */
export function silentText(silent) {
    if (silent === 0) return '';
    return `${counted(silent, 'connection')} ${silent === 1 ? 'does' : 'do'} not report telemetry (SDKs from before `
        + 'it, or telemetry turned off): not counted above.';
}

/**
 * Polls a version's propagation until it is confirmed, nobody is active, the time is up, a request is refused
 * (4xx other than 429), or `stop()` is called. `load()` answers the propagation JSON (a promise);
 * `onUpdate({propagation, outcome, elapsedMs})` follows every answer, `onError(error, {final})` every failure.
 * `clock()` gives milliseconds, `schedule(fn, ms)` / `cancel(handle)` are setTimeout and clearTimeout: the poll
 * reads no global, so that a test drives it step by step.
 */
export function createPropagationPoller({
    load, onUpdate, onError, clock, schedule, cancel, intervalMs = POLL_INTERVAL_MS, timeoutMs = POLL_TIMEOUT_MS,
}) {
    const started = clock();
    let timer = null;
    let stopped = false;

    function next() {
        if (!stopped) timer = schedule(poll, intervalMs);
    }

    async function poll() {
        timer = null;
        if (stopped) return;
        let answer;
        try {
            answer = await load();
        } catch (error) {
            if (stopped) return;
            const refused = error && error.status >= 400 && error.status < 500 && error.status !== 429;
            const elapsed = clock() - started;
            if (refused || elapsed >= timeoutMs) stopped = true;
            onError(error, { final: stopped });
            next();
            return;
        }
        if (stopped) return;
        const propagation = readPropagation(answer);
        const elapsedMs = clock() - started;
        const outcome = propagationOutcome(propagation, elapsedMs, timeoutMs);
        if (outcome !== 'waiting') stopped = true;
        onUpdate({ propagation, outcome, elapsedMs });
        next();
    }

    poll();
    return {
        stop() {
            stopped = true;
            if (timer !== null) cancel(timer);
            timer = null;
        },
        get stopped() {
            return stopped;
        },
    };
}
