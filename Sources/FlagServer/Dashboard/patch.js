// Keeping the open set's state current: the stream's `put` and `patch` events (docs/admin-api.md, client
// routes) and the answers to the dashboard's own writes. Pure: the state is a plain object
// `{name, version, flags: {key: flag}, cohorts: {name: cohort}}`, changed in place.

/** A set state from a whole document (the stream's `put`, `GET /v1/sets/{set}`). */
export function stateFromDocument(name, document) {
    return {
        name,
        version: document.version,
        flags: { ...(document.flags || {}) },
        cohorts: { ...(document.cohorts || {}) },
    };
}

/**
 * Applies one `patch` event (`{version, base, flags, cohorts, removed: {flags, cohorts}}`) to `state`:
 * - `{status: 'stale'}` when the state already has that version (the dashboard's own write, or a replay);
 * - `{status: 'gap'}` when `base` is not the state's version: a version was missed, refetch the set;
 * - `{status: 'applied', version, flags, removedFlags, cohorts, removedCohorts}` (the keys it touched) otherwise.
 */
export function applyPatch(state, patch) {
    if (!patch || typeof patch.version !== 'number') return { status: 'gap' };
    if (patch.version <= state.version) return { status: 'stale' };
    if (patch.base !== state.version) return { status: 'gap' };
    const flags = Object.keys(patch.flags || {});
    const cohorts = Object.keys(patch.cohorts || {});
    const removed = patch.removed || {};
    const removedFlags = Array.isArray(removed.flags) ? removed.flags : [];
    const removedCohorts = Array.isArray(removed.cohorts) ? removed.cohorts : [];
    for (const key of flags) state.flags[key] = patch.flags[key];
    for (const name of cohorts) state.cohorts[name] = patch.cohorts[name];
    for (const key of removedFlags) delete state.flags[key];
    for (const name of removedCohorts) delete state.cohorts[name];
    state.version = patch.version;
    return { status: 'applied', version: patch.version, flags, removedFlags, cohorts, removedCohorts };
}

/**
 * Applies the answer to one of the dashboard's writes (the mutation response `{set, version, changed, key?,
 * flag?, name?, cohort?}`) when it follows the state directly:
 * - `{status: 'unchanged'}` for `changed: false` or a version the state has;
 * - `{status: 'applied', flags, cohorts}` when it is version n+1 and carries the item it changed;
 * - `{status: 'refetch'}` otherwise (a delete, a rollback, a promote with cohorts, or a version skipped).
 * The stream's patch for the same version then reads as `stale` and changes nothing.
 */
export function applyMutation(state, answer) {
    if (!answer || answer.changed === false || answer.version <= state.version) return { status: 'unchanged' };
    if (answer.version !== state.version + 1) return { status: 'refetch' };
    if (typeof answer.key === 'string' && answer.flag && typeof answer.flag === 'object') {
        state.flags[answer.key] = answer.flag;
        state.version = answer.version;
        return { status: 'applied', version: answer.version, flags: [answer.key], cohorts: [] };
    }
    if (typeof answer.name === 'string' && answer.cohort && typeof answer.cohort === 'object') {
        state.cohorts[answer.name] = answer.cohort;
        state.version = answer.version;
        return { status: 'applied', version: answer.version, flags: [], cohorts: [answer.name] };
    }
    return { status: 'refetch' };
}
