// Making or revoking a token or an SDK key from a session needs the person's own token again (docs/admin-api.md,
// "People and roles"): the header that carries it, and which refusals let the person try again. Pure.

/** The request header that carries the person's own token. */
export const CONFIRM_HEADER = 'Flagstaff-Confirm-Token';

/** The headers to add for `token`: `{'Flagstaff-Confirm-Token': token}`, or none when there is no token. */
export function confirmHeaders(token) {
    if (typeof token !== 'string') return {};
    const trimmed = token.trim();
    return trimmed === '' ? {} : { [CONFIRM_HEADER]: trimmed };
}

/**
 * Whether `error` (an ApiError) is the server refusing or asking for the person's own token: a 403
 * `reauthentication_failed` (not the token the session was made from) or `reauthentication_required` (none sent).
 * The session itself is fine then, so the prompt stays open for another try.
 */
export function isReauthenticationRefusal(error) {
    return Boolean(error) && error.status === 403
        && (error.code === 'reauthentication_failed' || error.code === 'reauthentication_required');
}
