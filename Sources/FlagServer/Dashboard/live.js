// The open set: loads its flags and cohorts into the store, then follows its event stream so that another
// person's change (a kill) shows within a second, without a reload. fetch() reads the stream because EventSource
// cannot send the Authorization header, and the token never goes in a URL.

import { changeSentence } from '/ui/format.js';
import { applyPatch, stateFromDocument } from '/ui/patch.js';
import { reconnectDelay, SSEParser } from '/ui/sse.js';

function sleep(ms, signal) {
    return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
        }, { once: true });
    });
}

/**
 * Opens sets in the store and keeps the open one current. `notices.toast(text)` shows who changed what when it was
 * someone else (another person, or the same person from flagctl or another tab: they read as themselves).
 */
export function createLive({ api, store, notices }) {
    let session = null;

    async function fetchSet(name, signal) {
        const [flags, cohorts] = await Promise.all([
            api.get('listFlags', { set: name }, undefined, { signal }),
            api.get('listCohorts', { set: name }, undefined, { signal }),
        ]);
        // Two reads may straddle a write: claim the older version, so the stream's next patch still applies
        // (re-applying what the newer read already had is harmless).
        return {
            name,
            version: Math.min(flags.json.version, cohorts.json.version),
            flags: { ...(flags.json.flags || {}) },
            cohorts: { ...(cohorts.json.cohorts || {}) },
        };
    }

    async function announce(current, version) {
        if (version <= current.announced) return;
        try {
            const answer = await api.get('history', { set: current.name }, { limit: 1 }, { signal: current.controller.signal });
            const latest = answer.json.versions && answer.json.versions[0];
            if (latest && latest.version > current.announced && session === current) {
                current.announced = latest.version;
                // The person's own writes have their toast already (actions.js); the stream may bring their patch
                // before the write's answer, so they are recognised by the actor.
                const me = store.state.whoami && store.state.whoami.name;
                if (latest.actor !== me) notices.toast(changeSentence(latest));
            }
        } catch (error) {
            // Who made the change is a courtesy; the change itself is already shown. A 401 was handled by api.js.
            if (error.name !== 'AbortError' && error.status !== 401) current.announced = version;
        }
    }

    function handle(current, item) {
        if (item.type !== 'event' || session !== current) return;
        let data;
        try {
            data = JSON.parse(item.data);
        } catch {
            refetch();
            return;
        }
        const set = store.state.set;
        if (!set || set.name !== current.name) return;
        if (item.event === 'put') {
            if (data.version === set.version) return;
            const newer = data.version > set.version;
            store.replaceSet(stateFromDocument(current.name, data));
            if (newer) announce(current, data.version);
        } else if (item.event === 'patch') {
            const result = applyPatch(set, data);
            if (result.status === 'applied') {
                store.setChanged(result);
                announce(current, result.version);
            } else if (result.status === 'gap') {
                refetch();
            }
        }
    }

    async function follow(current) {
        const { signal } = current.controller;
        let attempt = 0;
        while (!signal.aborted) {
            store.setLive(attempt === 0 ? 'connecting' : 'reconnecting');
            try {
                const response = await api.openStream(current.name, { lastEventID: store.state.set?.version, signal });
                store.setLive('live');
                const reader = response.body.getReader();
                const decoder = new TextDecoder();
                const parser = new SSEParser();
                for (;;) {
                    const { value, done } = await reader.read();
                    if (done) break;
                    attempt = 0;
                    for (const item of parser.feed(decoder.decode(value, { stream: true }))) handle(current, item);
                }
            } catch (error) {
                if (signal.aborted) return;
                if (error.status === 401 || error.status === 403 || error.status === 404) {
                    store.setLive('offline');
                    return;
                }
            }
            if (signal.aborted) return;
            store.setLive('reconnecting');
            await sleep(reconnectDelay(attempt), signal);
            attempt += 1;
        }
    }

    /** reload() for the stream's handler, which has no one to hand an error to but the banner. */
    function refetch() {
        reload().catch((error) => {
            if (error.name !== 'AbortError' && error.status !== 401) notices.error(error);
        });
    }

    /** Refetches the open set (a missed version, a write the store cannot apply alone, the 409 panel's reload). */
    async function reload() {
        const current = session;
        if (!current) return;
        const set = await fetchSet(current.name, current.controller.signal);
        if (session === current) store.replaceSet(set);
    }

    /** Stops following and forgets the open set. */
    function close() {
        if (!session) return;
        session.controller.abort();
        session = null;
        store.setLive('offline');
        store.replaceSet(null);
    }

    return {
        /** Loads `name` into the store (once; again after a failure) and starts following its stream. */
        open(name) {
            if (session && session.name === name) return session.loading;
            close();
            const current = { name, controller: new AbortController(), announced: 0, loading: null };
            session = current;
            current.loading = fetchSet(name, current.controller.signal).then(
                (set) => {
                    if (session !== current) return;
                    current.announced = set.version;
                    store.replaceSet(set);
                    follow(current);
                },
                (error) => {
                    if (session === current) session = null;
                    throw error;
                },
            );
            return current.loading;
        },
        reload,
        close,
    };
}
