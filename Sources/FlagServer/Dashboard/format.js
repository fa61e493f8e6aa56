// How flag-set items and audit records read for people: values, conditions, rules, overrides and change
// sentences. Pure: returns text, never markup (the screens put it in with textContent).

/** A JSON value as compact JSON (`true`, `42`, `"blue"`, `{"columns":2}`); `—` when absent. */
export function valueText(value) {
    return value === undefined ? '—' : JSON.stringify(value);
}

/**
 * A value as the text a person edits, read back by the server by the flag's type (the `valueText` members of
 * docs/admin-api.md): the string itself for a `string` flag, JSON for the others.
 */
export function inputText(value, type) {
    if (value === undefined || value === null) return '';
    if (type === 'string' && typeof value === 'string') return value;
    return JSON.stringify(value);
}

/** `country in DE, AT` for a condition; `unitID in_cohort beta`. */
export function conditionText(condition) {
    if (!condition || typeof condition !== 'object') return '?';
    const values = Array.isArray(condition.values) ? condition.values.join(', ') : '';
    return [condition.attribute ?? '?', condition.op ?? '?', values].filter((part) => part !== '').join(' ');
}

/** Whom a rule addresses: `cohort beta`, `email ends_with @example.com and …`, or `everyone`. */
export function ruleTarget(rule) {
    if (typeof rule.cohort === 'string') return `cohort ${rule.cohort}`;
    if (Array.isArray(rule.conditions)) {
        return rule.conditions.length ? rule.conditions.map(conditionText).join(' and ') : 'everyone';
    }
    return 'everyone';
}

function rolloutServeText(rollout) {
    if (typeof rollout.percent === 'number') return `${rollout.percent} % get ${valueText(rollout.value)}`;
    if (Array.isArray(rollout.schedule)) return `a phased rollout of ${valueText(rollout.value)}`;
    return `a rollout of ${valueText(rollout.value)}`;
}

/** What a rule serves: `true`, `50 % get true`, `split control 34 % "blue", green 33 % "green"`. */
export function ruleServe(rule) {
    if (Array.isArray(rule.split)) {
        const parts = rule.split.map((arm) => {
            const name = typeof arm.name === 'string' ? `${arm.name} ` : '';
            return `${name}${arm.weight} % ${valueText(arm.value)}`;
        });
        return `split ${parts.join(', ')}`;
    }
    if (rule.rollout && typeof rule.rollout === 'object') return rolloutServeText(rule.rollout);
    return valueText(rule.value);
}

/** `unit u-9` or `cohort qa`. */
export function overrideTarget(override) {
    if (typeof override.unit === 'string') return `unit ${override.unit}`;
    if (typeof override.cohort === 'string') return `cohort ${override.cohort}`;
    return '?';
}

/** A percent for people: `10 %`, `2.5 %`. */
export function percentText(percent) {
    if (typeof percent !== 'number' || Number.isNaN(percent)) return '—';
    return `${Math.round(percent * 100) / 100} %`;
}

/** Past tenses of the audit actions (docs/admin-api.md, "Audit log"), read as `alice killed new-checkout`. */
const VERBS = {
    'set.create': 'created the set',
    'set.seed': 'seeded the set',
    'set.import': 'imported the set',
    'set.rollback': 'rolled back the set',
    'flag.create': 'created',
    'flag.replace': 'replaced',
    'flag.delete': 'deleted',
    'flag.kill': 'killed',
    'flag.restore': 'restored',
    'flag.default': 'changed the default of',
    'flag.expire': 'set the expiry of',
    'flag.archive': 'archived',
    'flag.unarchive': 'unarchived',
    'flag.promote': 'promoted',
    'flag.override.add': 'added an override to',
    'flag.override.remove': 'removed an override from',
    'flag.rollout.set': 'set the rollout of',
    'flag.rollout.remove': 'removed the rollout of',
    'flag.rollout.pause': 'paused the rollout of',
    'flag.rollout.resume': 'resumed the rollout of',
    'flag.rule.add': 'added a rule to',
    'flag.rule.remove': 'removed a rule from',
    'flag.prerequisite.set': 'set a prerequisite of',
    'flag.prerequisite.remove': 'removed a prerequisite from',
    'flag.values.set': 'set the values of',
    'flag.values.remove': 'dropped the list of values of',
    'cohort.create': 'created cohort',
    'cohort.replace': 'replaced cohort',
    'cohort.delete': 'deleted cohort',
    'key.create': 'created SDK key',
    'key.revoke': 'revoked SDK key',
    'token.create': 'created token',
    'token.revoke': 'revoked token',
};

/** `killed`, `changed the default of`; an action this dashboard does not know reads as itself. */
export function actionVerb(action) {
    return VERBS[action] ?? (typeof action === 'string' ? action : 'changed');
}

/**
 * One sentence for a history version or an audit record: `alice killed new-checkout: payment errors`.
 * Set-wide actions name no subject (`bob rolled back the set`).
 */
export function changeSentence(record) {
    if (!record || typeof record !== 'object') return '';
    const actor = typeof record.actor === 'string' ? record.actor : 'someone';
    const verb = actionVerb(record.action);
    const subject = typeof record.subject === 'string' && record.subject !== '' && !verb.endsWith('the set')
        ? ` ${record.subject}` : '';
    const reason = typeof record.reason === 'string' && record.reason !== '' ? `: ${record.reason}` : '';
    return `${actor} ${verb}${subject}${reason}`;
}

/** The condition operators of SPEC §2.3. */
export const OPERATORS = [
    'eq', 'neq', 'in', 'not_in', 'contains', 'starts_with', 'ends_with', 'matches', 'lt', 'lte', 'gt', 'gte',
    'semver_eq', 'semver_lt', 'semver_lte', 'semver_gt', 'semver_gte', 'before', 'after', 'exists', 'not_exists',
    'in_cohort',
];

/**
 * A condition typed as flagctl's `--where` takes it, `ATTRIBUTE OP VALUE[,VALUE]` (`country in DE,AT`,
 * `email exists`): `{condition: {attribute, op, values}}` or `{error}` saying what is wrong. Values are split on
 * commas and trimmed; `matches` keeps its whole pattern (a regular expression may contain commas).
 */
export function parseCondition(line) {
    const text = String(line).trim();
    const match = /^(\S+)\s+(\S+)(?:\s+(.*))?$/.exec(text);
    if (!match) return { error: `"${text}": write ATTRIBUTE OP VALUE, e.g. country in DE,AT` };
    const [, attribute, op, rest = ''] = match;
    if (!OPERATORS.includes(op)) return { error: `"${text}": unknown operator ${op} (one of ${OPERATORS.join(', ')})` };
    const raw = rest.trim();
    if (op === 'exists' || op === 'not_exists') {
        return raw === '' ? { condition: { attribute, op, values: [] } } : { error: `"${text}": ${op} takes no value` };
    }
    if (raw === '') return { error: `"${text}": ${op} needs a value` };
    const values = op === 'matches' ? [raw] : raw.split(',').map((value) => value.trim()).filter((value) => value !== '');
    return { condition: { attribute, op, values } };
}

/** Every non-empty line of `text` as a condition: `{conditions}` or `{errors}` (one per bad line). */
export function parseConditions(text) {
    const lines = String(text).split('\n').map((line) => line.trim()).filter((line) => line !== '');
    const conditions = [];
    const errors = [];
    for (const line of lines) {
        const result = parseCondition(line);
        if (result.error) errors.push(result.error);
        else conditions.push(result.condition);
    }
    return errors.length ? { errors } : { conditions };
}
