// Webhooks (docs/webhooks.md) as the screen shows them: a hook's row, a delivery's row, the create form's request
// and its problems, the server's refusal at the form's fields. Pure: no DOM, no clock.

/** The event types a hook may be limited to, in the order the form offers them (FlagAPI's WebhookEventType). */
export const EVENT_TYPES = [
    'version.created', 'change.opened', 'change.approved', 'change.applied', 'change.failed', 'change.rejected',
    'token.created', 'token.revoked', 'key.created', 'key.revoked', 'flag.expired', 'webhook.test',
];

/** The formats of a delivery's body: Standard Webhooks JSON, or a Slack incoming-webhook message. */
export const FORMATS = ['json', 'slack'];

/** The server's rule for a hook's name (as for flag keys). */
const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;

function listText(items, everything) {
    return Array.isArray(items) && items.length > 0 ? items.join(', ') : everything;
}

/**
 * `{state, text}` of a hook: `enabled`, or `disabled` with the server's reason (a receiver that answered 410). Nothing
 * is sent to a disabled hook; deleting it and making it again is the way back.
 */
export function hookStatus(hook) {
    if (typeof hook.disabledAt !== 'string') return { state: 'enabled', text: 'enabled' };
    const reason = typeof hook.disabledReason === 'string' && hook.disabledReason !== '' ? hook.disabledReason : 'no reason given';
    return { state: 'disabled', text: `disabled: ${reason}` };
}

/**
 * A hook's row (WebhookInfo): `{name, url, format, sets, events, pending, state, status, description, createdBy,
 * createdAt, previousSecretUntil}`, each a text but the times (ISO texts or null) and `pending` (a number). No sets
 * reads "every set", no events "every event".
 */
export function webhookRow(hook) {
    const status = hookStatus(hook);
    return {
        name: hook.name,
        url: hook.url ?? '',
        format: hook.format ?? 'json',
        sets: listText(hook.sets, 'every set'),
        events: listText(hook.events, 'every event'),
        pending: Number.isInteger(hook.pending) ? hook.pending : 0,
        state: status.state,
        status: status.text,
        description: typeof hook.description === 'string' ? hook.description : '',
        createdBy: hook.createdBy ?? '',
        createdAt: typeof hook.createdAt === 'string' ? hook.createdAt : null,
        previousSecretUntil: typeof hook.previousSecretUntil === 'string' ? hook.previousSecretUntil : null,
    };
}

/**
 * A delivery's row (WebhookDeliveryInfo): `{id, type, set, createdAt, state, attempts, nextAttemptAt, lastStatus,
 * lastError, finishedAt}`. `set` is "—" for an event of no set; `lastStatus` the receiver's HTTP status as text, or
 * "—" when none answered; `nextAttemptAt` only while the delivery is pending.
 */
export function deliveryRow(delivery) {
    const time = (value) => (typeof value === 'string' ? value : null);
    return {
        id: delivery.id,
        type: delivery.type ?? '',
        set: typeof delivery.set === 'string' ? delivery.set : '—',
        createdAt: time(delivery.createdAt),
        state: delivery.state ?? '',
        attempts: Number.isInteger(delivery.attempts) ? delivery.attempts : 0,
        nextAttemptAt: delivery.state === 'pending' ? time(delivery.nextAttemptAt) : null,
        lastStatus: Number.isInteger(delivery.lastStatus) ? String(delivery.lastStatus) : '—',
        lastError: typeof delivery.lastError === 'string' ? delivery.lastError : '',
        finishedAt: time(delivery.finishedAt),
    };
}

/**
 * How long the hook's screen waits before it asks for the deliveries again (ms), or null when none is pending: soon
 * (`min`) for one that is due, else a moment after the earliest next attempt, but never longer than `max`, so that a
 * hook retrying with backoff for a day is not asked every few seconds and one that is due shows its outcome at once.
 * `now` in ms.
 */
export function pollDelay(deliveries, now, { min = 3000, max = 60000 } = {}) {
    const pending = Array.isArray(deliveries) ? deliveries.filter((delivery) => delivery && delivery.state === 'pending') : [];
    if (pending.length === 0) return null;
    const due = pending.map((delivery) => Date.parse(delivery.nextAttemptAt)).filter(Number.isFinite);
    if (due.length === 0) return min;
    const wait = Math.min(...due) - now + 1000;
    return Math.max(min, Math.min(max, wait));
}

function trimmed(value) {
    return typeof value === 'string' ? value.trim() : '';
}

/**
 * The body of `createWebhook` from the form's values (`{name, url, sets: [], events: [], format, description,
 * reason}`): no set ticked leaves `sets` out (every set), no event `events` (every event); empty texts are left out.
 */
export function webhookBody(values) {
    const body = { name: trimmed(values.name), url: trimmed(values.url) };
    if (Array.isArray(values.sets) && values.sets.length) body.sets = [...values.sets];
    if (Array.isArray(values.events) && values.events.length) body.events = [...values.events];
    body.format = FORMATS.includes(values.format) ? values.format : 'json';
    if (trimmed(values.description)) body.description = trimmed(values.description);
    if (trimmed(values.reason)) body.reason = trimmed(values.reason);
    return body;
}

/**
 * What the form can see is wrong before sending, `[{field, message}]`: a name the server would refuse, a URL that is
 * not http or https, and, for an admin limited to sets (`limited`), no set ticked (such an admin may make only hooks
 * of their own sets). Whether the address is private is for the server to say.
 */
export function checkWebhookForm(values, { limited = false } = {}) {
    const problems = [];
    const name = trimmed(values.name);
    if (!NAME_PATTERN.test(name)) {
        problems.push({ field: 'name', message: 'Lower-case letters, digits, ".", "_" and "-", starting with a letter or digit; up to 128.' });
    }
    const url = trimmed(values.url);
    let parsed = null;
    try {
        parsed = new URL(url);
    } catch {
        parsed = null;
    }
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') || parsed.hostname === '') {
        problems.push({ field: 'url', message: 'An address that starts with https:// (or http://).' });
    }
    if (limited && !(Array.isArray(values.sets) && values.sets.length)) {
        problems.push({ field: 'sets', message: 'Your token is limited to sets: tick at least one of them.' });
    }
    return problems;
}

/** The form's field of each member of the request the server may name in a refusal (`events[2]` is `events`). */
const FORM_FIELDS = { name: 'name', url: 'url', sets: 'sets', events: 'events', format: 'format', description: 'description', reason: 'reason' };

/**
 * The server's refusal of `createWebhook` (an ApiError) at the form's fields, `[{field, message}]`, each message
 * keeping the path the server named where it is more than the field (`events[1]: unknown event …`). A taken name
 * (409) goes to the name; a refusal of no field (a 403 for a set, a 503 without a key-encryption key) goes to
 * `fallback` with its path, so that the form stays open and says why. A 401 is none: the page is signing out.
 */
export function webhookProblems(error, { fallback = 'name' } = {}) {
    if (!error || error.status === 401) return [];
    const problems = Array.isArray(error.problems) && error.problems.length
        ? error.problems
        : [{ path: error.path ?? '', message: error.message }];
    return problems.map((problem) => {
        const path = typeof problem.path === 'string' ? problem.path : '';
        const member = /^[A-Za-z]+/.exec(path)?.[0];
        const field = error.status === 409 && error.code === 'already_exists' ? 'name' : FORM_FIELDS[member];
        const message = path && path !== field ? `${path}: ${problem.message}` : problem.message;
        return { field: field ?? fallback, message };
    });
}
