// Relative and absolute times for people. Pure: no DOM, no clock; every function takes `now`.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Milliseconds since the epoch of an ISO-8601 text, a Date or a number; NaN for anything else. */
export function toMillis(value) {
    if (typeof value === 'number') return value;
    if (value instanceof Date) return value.getTime();
    if (typeof value === 'string' && value !== '') return Date.parse(value);
    return NaN;
}

function counted(amount, unit) {
    return `${amount} ${unit}${amount === 1 ? '' : 's'}`;
}

/**
 * A span of time in the largest unit that fits, rounded down so that nothing reads longer than it was:
 * `3 minutes`, `5 hours`, `12 days` (up to 59), `4 months` (30 days each, up to 11), `2 years`.
 */
export function describeSpan(ms) {
    const span = Math.abs(ms);
    if (span < HOUR) return counted(Math.max(1, Math.floor(span / MINUTE)), 'minute');
    if (span < DAY) return counted(Math.floor(span / HOUR), 'hour');
    const days = Math.floor(span / DAY);
    if (days < 60) return counted(days, 'day');
    if (days < 365) return counted(Math.floor(days / 30), 'month');
    return counted(Math.floor(days / 365), 'year');
}

/** Within this distance of now a time reads `just now` rather than a count of minutes. */
const JUST_NOW = 45 * SECOND;

/** `in 12 days`, `3 minutes ago`, `just now`; empty text when either time is unreadable. */
export function relativeTime(then, now) {
    const t = toMillis(then);
    const n = toMillis(now);
    if (!Number.isFinite(t) || !Number.isFinite(n)) return '';
    const delta = t - n;
    if (Math.abs(delta) < JUST_NOW) return 'just now';
    return delta > 0 ? `in ${describeSpan(delta)}` : `${describeSpan(delta)} ago`;
}

/**
 * How a flag's expiry reads: `{state: 'none', text: 'never'}`, `{state: 'future', text: 'in 12 days'}` or
 * `{state: 'expired', text: 'expired 3 days ago'}` (expiry happens at `now >= expiresAt`, SPEC §2 rule 4).
 */
export function expiryText(expiresAt, now) {
    const t = toMillis(expiresAt);
    const n = toMillis(now);
    if (!Number.isFinite(t) || !Number.isFinite(n)) return { state: 'none', text: 'never' };
    if (n >= t) return { state: 'expired', text: `expired ${relativeTime(t, n)}` };
    return { state: 'future', text: relativeTime(t, n) };
}

function pad(number) {
    return String(number).padStart(2, '0');
}

/** `2026-11-29 10:00 UTC`: an absolute time that reads the same for everyone on a call. */
export function formatUTC(value) {
    const t = toMillis(value);
    if (!Number.isFinite(t)) return '';
    const d = new Date(t);
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} `
        + `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** `Nov 29`: a short date for chart ticks, in UTC like every time the server sends. */
export function formatShortDate(value) {
    const t = toMillis(value);
    if (!Number.isFinite(t)) return '';
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const d = new Date(t);
    return `${months[d.getUTCMonth()]} ${d.getUTCDate()}`;
}

/** The server's time format: ISO-8601 UTC in whole seconds (`2026-11-29T10:00:00Z`). */
export function isoSeconds(value) {
    const t = toMillis(value);
    if (!Number.isFinite(t)) return '';
    return new Date(Math.floor(t / SECOND) * SECOND).toISOString().replace('.000Z', 'Z');
}

/**
 * The text of an `<input type="datetime-local">` (the person's local time, no zone) as the server's ISO time;
 * empty text for an empty or unreadable input.
 */
export function localInputToISO(text) {
    if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)) return '';
    const [date, time] = text.split('T');
    const [year, month, day] = date.split('-').map(Number);
    const [hours, minutes, seconds = 0] = time.split(':').map(Number);
    return isoSeconds(new Date(year, month - 1, day, hours, minutes, seconds));
}
