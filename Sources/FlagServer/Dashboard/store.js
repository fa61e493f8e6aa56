// The dashboard's state, in one place: who is signed in, the sets, and the open set's flags and cohorts at one
// version. Screens render from it and subscribe to its changes; only live.js and the write helpers change the
// open set.

/**
 * A store. `state` members: `whoami` (GET /v1/admin/whoami), `sets` (GET /v1/admin/sets's list), `set` (the open
 * set: `{name, version, flags, cohorts}`, patch.js's shape), `live` (`offline`, `connecting`, `live`,
 * `reconnecting`).
 *
 * Listeners get one change per notification: `{topic: 'whoami' | 'sets' | 'live'}`, `{topic: 'set', reset: true}`
 * when the whole set was replaced, or `{topic: 'set', version, flags: [keys], removedFlags, cohorts,
 * removedCohorts}` for a patch.
 */
export function createStore() {
    const state = { whoami: null, sets: null, set: null, live: 'offline' };
    const listeners = new Set();

    function notify(change) {
        for (const listener of [...listeners]) listener(change);
    }

    return {
        state,
        /** Calls `listener(change)` on every change until the returned function is called. */
        subscribe(listener) {
            listeners.add(listener);
            return () => listeners.delete(listener);
        },
        setWhoami(whoami) {
            state.whoami = whoami;
            notify({ topic: 'whoami' });
        },
        setSets(sets) {
            state.sets = sets;
            notify({ topic: 'sets' });
        },
        /** Replaces the open set (or closes it with null). */
        replaceSet(set) {
            state.set = set;
            notify({ topic: 'set', reset: true });
        },
        /** Announces a change made in place on `state.set` (patch.js's result). */
        setChanged(result) {
            notify({ topic: 'set', ...result });
        },
        setLive(status) {
            if (state.live === status) return;
            state.live = status;
            notify({ topic: 'live' });
        },
        /** Forgets everything about the signed-in person (sign-out, 401). */
        reset() {
            state.whoami = null;
            state.sets = null;
            state.set = null;
            state.live = 'offline';
            notify({ topic: 'whoami' });
            notify({ topic: 'set', reset: true });
        },
    };
}
