// Member-by-member comparison of two JSON items (two versions of a flag or a cohort) for the side-by-side diff.
// Pure: no DOM.

/** Whether a value is a JSON object (not an array, not null). */
export function isObject(value) {
    return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether two JSON values are equal; object member order does not matter, array order does. */
export function deepEqual(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) {
        if (!Array.isArray(b) || a.length !== b.length) return false;
        return a.every((item, i) => deepEqual(item, b[i]));
    }
    if (isObject(a)) {
        if (!isObject(b)) return false;
        const keys = Object.keys(a);
        if (keys.length !== Object.keys(b).length) return false;
        return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(a[key], b[key]));
    }
    return false;
}

/** Compact JSON of a value; `undefined` (an absent member) is the empty text. */
export function jsonText(value) {
    return value === undefined ? '' : JSON.stringify(value);
}

function unionKeys(before, after) {
    const keys = Object.keys(before);
    for (const key of Object.keys(after)) {
        if (!Object.prototype.hasOwnProperty.call(before, key)) keys.push(key);
    }
    return keys;
}

function walk(before, after, path, rows) {
    if (isObject(before) && isObject(after)) {
        for (const key of unionKeys(before, after)) {
            walk(before[key], after[key], path ? `${path}.${key}` : key, rows);
        }
        return;
    }
    if (Array.isArray(before) && Array.isArray(after) && !deepEqual(before, after)) {
        const length = Math.max(before.length, after.length);
        for (let i = 0; i < length; i++) walk(before[i], after[i], `${path}[${i}]`, rows);
        return;
    }
    let change;
    if (before === undefined) change = 'added';
    else if (after === undefined) change = 'removed';
    else change = deepEqual(before, after) ? 'same' : 'changed';
    rows.push({ path, before, after, change });
}

/**
 * The rows of a side-by-side diff of two items, in the items' member order: one row per member, descending into
 * members that are objects on both sides (and arrays on both sides that differ), so a changed rollout step shows
 * as `rollout.schedule[2].percent`. Each row is `{path, before, after, change}` with `change` one of `same`,
 * `changed`, `added` (absent before), `removed` (absent after); `before`/`after` are `undefined` when absent.
 * A missing item (`null`: the flag did not exist in that version) compares as an item with no members.
 */
export function diffMembers(before, after) {
    const rows = [];
    walk(isObject(before) ? before : {}, isObject(after) ? after : {}, '', rows);
    return rows;
}

/** The top-level members that differ between two items, for one-line summaries (`killed, rollout`). */
export function changedMembers(before, after) {
    const a = isObject(before) ? before : {};
    const b = isObject(after) ? after : {};
    return unionKeys(a, b).filter((key) => !deepEqual(a[key], b[key]));
}
