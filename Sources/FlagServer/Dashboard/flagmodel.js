// A flag as the dashboard shows it: its rollout percent at a time (SPEC §2.2), its state, its prerequisites, and the
// filters of the flags screen. Pure: no DOM, no clock; callers pass `now` in milliseconds.
//
// This module imports nothing so that node's test runner loads it as it is; the browser loads it as /ui/flagmodel.js.

const DAY = 86_400_000;

/** After this long past `expiresAt`, an expired flag that is still not archived is `stale` (flagctl's "overdue"). */
export const STALE_AFTER_MS = 14 * DAY;

/** The badge of a flag with none of the states below: it serves its default and targeting, nothing pending. */
export const QUIET_STATE = 'default';

/** The states a flag can be in, in the order the badge picks them (the order evaluation applies them, §2). */
export const STATES = ['archived', 'killed', 'stale', 'expired', 'paused', 'rolling out'];

/** The kinds of SPEC §1, in the order the kind filter lists them. */
export const KINDS = ['release', 'experiment', 'ops', 'kill-switch', 'permission'];

function millis(value) {
    return typeof value === 'string' ? Date.parse(value) : NaN;
}

function clampPercent(percent) {
    if (typeof percent !== 'number' || Number.isNaN(percent)) return 0;
    return Math.min(100, Math.max(0, percent));
}

/** The schedule's steps with readable times, sorted by time (the server sends them sorted; this does not rely on it). */
export function scheduleSteps(rollout) {
    if (!rollout || !Array.isArray(rollout.schedule)) return [];
    return rollout.schedule
        .map((step) => ({ at: millis(step && step.at), percent: clampPercent(step && step.percent) }))
        .filter((step) => Number.isFinite(step.at))
        .sort((a, b) => a.at - b.at);
}

/** `pausedAt` in milliseconds, or null when the rollout runs. */
export function pausedAtMillis(rollout) {
    const t = millis(rollout && rollout.pausedAt);
    return Number.isFinite(t) ? t : null;
}

/**
 * The percent of units a rollout serves at time `t` (ms): a fixed `percent`, or the percent of the last schedule
 * step with `at <= t` (0 before the first); a paused schedule stays at its percent at `pausedAt`. Null without a
 * rollout.
 */
export function percentAt(rollout, t) {
    if (!rollout || typeof rollout !== 'object') return null;
    if (typeof rollout.percent === 'number') return clampPercent(rollout.percent);
    const paused = pausedAtMillis(rollout);
    const time = paused === null ? t : Math.min(paused, t);
    let percent = 0;
    for (const step of scheduleSteps(rollout)) {
        if (step.at <= time) percent = step.percent;
    }
    return percent;
}

/**
 * Where a rollout stands at `now`: `none`, `paused`, `rolling out` (a step still ahead, or held below 100 %), or
 * `complete` (everyone, nothing ahead).
 */
export function rolloutPhase(rollout, now) {
    if (!rollout || typeof rollout !== 'object') return 'none';
    if (pausedAtMillis(rollout) !== null) return 'paused';
    if (typeof rollout.percent === 'number') return clampPercent(rollout.percent) >= 100 ? 'complete' : 'rolling out';
    const steps = scheduleSteps(rollout);
    if (steps.some((step) => step.at > now)) return 'rolling out';
    return percentAt(rollout, now) >= 100 ? 'complete' : 'rolling out';
}

/**
 * Every state that applies to the flag at `now`, the badge's first: `archived` alone; else any of `killed`,
 * `stale` (expired at least 14 days ago), `expired` (every flag past `expiresAt`, stale ones included, so that
 * the `expired` filter counts what the sets screen counts as stale), `paused`, `rolling out`; or [QUIET_STATE].
 */
export function flagStates(flag, now) {
    if (!flag || typeof flag !== 'object') return [QUIET_STATE];
    if (flag.archived === true) return ['archived'];
    const states = [];
    if (flag.killed === true) states.push('killed');
    const expires = millis(flag.expiresAt);
    if (Number.isFinite(expires) && now >= expires) {
        if (now - expires >= STALE_AFTER_MS) states.push('stale');
        states.push('expired');
    }
    const phase = rolloutPhase(flag.rollout, now);
    if (phase === 'paused' || phase === 'rolling out') states.push(phase);
    return states.length ? states : [QUIET_STATE];
}

/** The one state the badge shows. */
export function primaryState(flag, now) {
    return flagStates(flag, now)[0];
}

/** What the filters look at for one flag, computed once per flag (not per keystroke). */
export function indexFlag(key, flag, now) {
    const f = flag && typeof flag === 'object' ? flag : {};
    const text = (value) => (typeof value === 'string' ? value : '');
    return {
        key,
        haystack: `${key}\n${text(f.description)}\n${text(f.owner)}`.toLowerCase(),
        kind: text(f.kind),
        owner: text(f.owner),
        states: flagStates(f, now),
    };
}

/** A filter as the person typed it: `{text, kind, state, owner}`, empty members meaning "any". */
export function normalizeFilter(filter = {}) {
    const text = typeof filter.text === 'string' ? filter.text : '';
    return {
        terms: text.toLowerCase().split(/\s+/).filter(Boolean),
        kind: filter.kind || '',
        state: filter.state || '',
        owner: filter.owner || '',
    };
}

/** Whether an indexed flag passes a normalized filter: every search term in key, description or owner, and each
 * chosen kind, state and owner. */
export function matches(entry, filter) {
    if (filter.kind && entry.kind !== filter.kind) return false;
    if (filter.owner && entry.owner !== filter.owner) return false;
    if (filter.state && !entry.states.includes(filter.state)) return false;
    for (const term of filter.terms) {
        if (!entry.haystack.includes(term)) return false;
    }
    return true;
}

/** The keys of `flags` (an object key → flag) that pass `filter`, sorted. */
export function filterFlags(flags, filter, now) {
    const normalized = normalizeFilter(filter);
    return Object.keys(flags || {})
        .sort()
        .filter((key) => matches(indexFlag(key, flags[key], now), normalized));
}

/** The owners named by the flags, sorted, for the owner filter. */
export function owners(flags) {
    const names = new Set();
    for (const flag of Object.values(flags || {})) {
        if (flag && typeof flag.owner === 'string' && flag.owner !== '') names.add(flag.owner);
    }
    return [...names].sort();
}

/** The kinds for the kind filter: SPEC's, then any other kind the flags use. */
export function kinds(flags) {
    const extra = new Set();
    for (const flag of Object.values(flags || {})) {
        if (flag && typeof flag.kind === 'string' && !KINDS.includes(flag.kind)) extra.add(flag.kind);
    }
    return [...KINDS, ...[...extra].sort()];
}

/** The name of the rule that carries a flag's prerequisites in the wire form (docs/core.md, "Prerequisites"). */
const PREREQUISITE_RULE = 'prerequisites';

/** Whether `rule` is the wire form's rule: named `prerequisites`, every condition of op `prerequisite`. */
function isPrerequisiteRule(rule) {
    return Boolean(rule) && rule.name === PREREQUISITE_RULE && Array.isArray(rule.conditions)
        && rule.conditions.length > 0 && rule.conditions.every((condition) => condition && condition.op === 'prerequisite');
}

/** A wire value, the canonical JSON text of a value, as that value; a text that does not parse stays the text. */
function wireValue(text) {
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}

/**
 * A flag's prerequisites, `[{flag, values}]` with the values as JS values, and its rules as people read them:
 * `{prerequisites, rules}`. Reads both forms: the authoring form's `prerequisites` member, and the wire form the
 * server serves, a first rule whose conditions name the required flags (`attribute`) and their values as JSON text;
 * that rule is left out of `rules`, so that it never shows as a rule.
 */
export function prerequisitesAndRules(flag) {
    const f = flag && typeof flag === 'object' ? flag : {};
    const listed = Array.isArray(f.prerequisites) ? f.prerequisites : [];
    const prerequisites = listed
        .filter((item) => item && typeof item.flag === 'string')
        .map((item) => ({ flag: item.flag, values: Array.isArray(item.values) ? item.values : [] }));
    const rules = Array.isArray(f.rules) ? f.rules : [];
    if (!isPrerequisiteRule(rules[0])) return { prerequisites, rules };
    for (const condition of rules[0].conditions) {
        const values = Array.isArray(condition.values) ? condition.values.map(wireValue) : [];
        prerequisites.push({ flag: String(condition.attribute), values });
    }
    return { prerequisites, rules: rules.slice(1) };
}

/** The keys of `flags` (an object key → flag) that list flag `key` as a prerequisite, sorted: its dependents. */
export function dependentsOf(flags, key) {
    return Object.keys(flags || {})
        .filter((other) => prerequisitesAndRules(flags[other]).prerequisites.some((item) => item.flag === key))
        .sort();
}

/** The values an enum flag may serve (docs/core.md, "Enum flags"), in its order; null for any other flag. */
export function enumChoices(flag) {
    if (!flag || flag.type !== 'string' || !Array.isArray(flag.values) || flag.values.length === 0) return null;
    return flag.values.filter((value) => typeof value === 'string');
}
