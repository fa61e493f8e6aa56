import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
    describeSpan, expiryText, formatShortDate, formatUTC, isoSeconds, localInputToISO, relativeTime, toMillis,
} from '../../Sources/FlagServer/Dashboard/time.js';

const now = Date.parse('2026-11-29T10:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

test('relative times in the past and the future', () => {
    assert.equal(relativeTime(now - 3 * MINUTE, now), '3 minutes ago');
    assert.equal(relativeTime(now - 3 * MINUTE - 50_000, now), '3 minutes ago', 'rounded down');
    assert.equal(relativeTime(now + 12 * DAY, now), 'in 12 days');
    assert.equal(relativeTime(now + 12 * DAY + 5 * HOUR, now), 'in 12 days');
    assert.equal(relativeTime(now - 1 * HOUR, now), '1 hour ago');
    assert.equal(relativeTime(now - 5 * HOUR, now), '5 hours ago');
    assert.equal(relativeTime(now - 1 * DAY, now), '1 day ago');
    assert.equal(relativeTime(now - 50_000, now), '1 minute ago');
    assert.equal(relativeTime(now - 10_000, now), 'just now');
    assert.equal(relativeTime(now + 10_000, now), 'just now');
    assert.equal(relativeTime(now + 90 * DAY, now), 'in 3 months');
    assert.equal(relativeTime(now - 800 * DAY, now), '2 years ago');
});

test('relative times read ISO texts and Dates', () => {
    assert.equal(relativeTime('2026-11-29T09:57:00Z', new Date(now)), '3 minutes ago');
    assert.equal(relativeTime('2026-12-11T10:00:00Z', '2026-11-29T10:00:00Z'), 'in 12 days');
    assert.equal(relativeTime('not a time', now), '');
    assert.equal(relativeTime(null, now), '');
});

test('spans pick the largest unit that fits', () => {
    assert.equal(describeSpan(59 * MINUTE), '59 minutes');
    assert.equal(describeSpan(60 * MINUTE), '1 hour');
    assert.equal(describeSpan(23 * HOUR + 59 * MINUTE), '23 hours');
    assert.equal(describeSpan(59 * DAY), '59 days');
    assert.equal(describeSpan(60 * DAY), '2 months');
    assert.equal(describeSpan(-2 * DAY), '2 days');
});

test('expiry reads as a future time, an expiry in the past, or never', () => {
    assert.deepEqual(expiryText('2026-12-11T10:00:00Z', now), { state: 'future', text: 'in 12 days' });
    assert.deepEqual(expiryText('2026-11-26T10:00:00Z', now), { state: 'expired', text: 'expired 3 days ago' });
    assert.deepEqual(expiryText('2026-11-29T10:00:00Z', now), { state: 'expired', text: 'expired just now' },
        'expiresAt == now is expired (SPEC §2 rule 4)');
    assert.deepEqual(expiryText(undefined, now), { state: 'none', text: 'never' });
});

test('absolute times are UTC', () => {
    assert.equal(formatUTC('2026-11-29T10:05:09Z'), '2026-11-29 10:05 UTC');
    assert.equal(formatShortDate('2026-02-03T23:00:00Z'), 'Feb 3');
    assert.equal(isoSeconds(Date.parse('2026-11-29T10:00:00.750Z')), '2026-11-29T10:00:00Z');
    assert.equal(formatUTC('garbage'), '');
    assert.ok(Number.isNaN(toMillis({})));
});

test('a datetime-local input becomes the server time format', () => {
    const local = new Date(2026, 10, 29, 14, 30, 0);
    assert.equal(localInputToISO('2026-11-29T14:30'), isoSeconds(local));
    assert.match(localInputToISO('2026-11-29T14:30:15'), /^2026-11-\d\dT\d\d:\d\d:15Z$/);
    assert.equal(localInputToISO(''), '');
    assert.equal(localInputToISO('tomorrow'), '');
});
