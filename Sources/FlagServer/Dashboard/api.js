// The one client of flagserver's admin API: adds the session token, sends If-Match, and turns error answers into
// ApiError (like flagctl's AdminClient). Any 401 clears the token and hands the error to `onUnauthorized`. Requests
// name an endpoint of the server's table (endpoints.js) and its path parameters; no path is written here.

import { errorInfo, etagVersion, networkErrorInfo } from '/ui/errors.js';
import { confirmHeaders } from '/ui/reauth.js';

/** The sessionStorage key of the session token; nothing else about the token is stored anywhere. */
const TOKEN_KEY = 'flagstaff.sessionToken';

/** The session token in `storage` (sessionStorage): gone when the tab closes, never sent anywhere but in a header. */
export function createTokenStore(storage) {
    return {
        get() {
            try {
                return storage.getItem(TOKEN_KEY);
            } catch {
                return null;
            }
        },
        set(token) {
            storage.setItem(TOKEN_KEY, token);
        },
        clear() {
            try {
                storage.removeItem(TOKEN_KEY);
            } catch {
                // Storage refused (privacy mode): there is nothing stored to clear.
            }
        },
    };
}

/** An error answer (or no answer) of the API, with the members of errors.js's `errorInfo`. */
export class ApiError extends Error {
    constructor(info) {
        super(info.message);
        this.name = 'ApiError';
        this.status = info.status;
        this.code = info.code;
        this.path = info.path;
        this.problems = info.problems;
        this.currentVersion = info.currentVersion;
        this.incompatibility = info.incompatibility ?? null;
    }
}

function withQuery(path, query) {
    if (!query) return path;
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
        if (value !== undefined && value !== null && value !== '') params.append(name, String(value));
    }
    const text = params.toString();
    return text ? `${path}?${text}` : path;
}

/**
 * The API client. `fetchImpl` is window.fetch, `tokens` a createTokenStore, `onUnauthorized(error)` what to do
 * when the server refuses the token (sign-in, showing the server's reason), `endpoints` the server's table
 * (endpoints.js's createEndpoints).
 */
export function createApi({ fetchImpl, tokens, onUnauthorized, endpoints }) {
    function headersFor(bearer, ifMatch, accept, ownToken) {
        const headers = { Accept: accept, ...confirmHeaders(ownToken) };
        const token = bearer ?? tokens.get();
        if (token) headers.Authorization = `Bearer ${token}`;
        if (ifMatch !== undefined && ifMatch !== null) headers['If-Match'] = `"${ifMatch}"`;
        return headers;
    }

    function refused(error) {
        tokens.clear();
        onUnauthorized(error);
    }

    /**
     * Sends one request and answers `{status, json, version}` (`version` from `ETag`), or throws ApiError.
     * Options: `query`, `body` (JSON), `ifMatch` (a version), `bearer` (a token other than the session's: the
     * personal token at sign-in), `ownToken` (the person's own token, in `Flagstaff-Confirm-Token`: the server asks
     * a session for it to make or revoke a token or an SDK key; it goes into this request only), `createOnly`
     * (`If-None-Match: *`: create, never replace), `signal`.
     */
    async function request(method, path, options = {}) {
        const headers = headersFor(options.bearer, options.ifMatch, 'application/json', options.ownToken);
        // Create only: the server answers 409 `already_exists` instead of replacing what is there.
        if (options.createOnly) headers['If-None-Match'] = '*';
        const init = { method, headers, cache: 'no-store', credentials: 'same-origin', signal: options.signal };
        if (options.body !== undefined) {
            headers['Content-Type'] = 'application/json';
            init.body = JSON.stringify(options.body);
        }
        let response;
        try {
            response = await fetchImpl(withQuery(path, options.query), init);
        } catch (error) {
            if (error && error.name === 'AbortError') throw error;
            throw new ApiError(networkErrorInfo());
        }
        const text = await response.text();
        let json = null;
        if (text !== '') {
            try {
                json = JSON.parse(text);
            } catch {
                json = undefined;
            }
        }
        if (!response.ok) {
            const error = new ApiError(errorInfo(response.status, json));
            if (response.status === 401) refused(error);
            throw error;
        }
        if (json === undefined) {
            throw new ApiError({
                ...errorInfo(response.status, null),
                code: 'bad_response',
                message: `flagserver answered ${method} ${path} with a body that is not JSON`,
            });
        }
        return { status: response.status, json, version: etagVersion(response.headers.get('ETag')) };
    }

    /**
     * Opens the set's event stream (`GET /v1/sets/{set}/stream`) with the token in the header, where EventSource
     * could only put it in the URL. Answers the Response, whose body the caller reads; throws ApiError.
     */
    /** Sends the endpoint `name` with its path parameters `params`; the options are `request`'s. */
    function call(name, params, options = {}) {
        return request(endpoints.method(name), endpoints.path(name, params), options);
    }

    async function openStream(set, { lastEventID, signal }) {
        const headers = headersFor(undefined, undefined, 'text/event-stream');
        if (lastEventID !== undefined && lastEventID !== null) headers['Last-Event-ID'] = String(lastEventID);
        let response;
        try {
            response = await fetchImpl(endpoints.path('stream', { set }), { headers, cache: 'no-store', signal });
        } catch (error) {
            if (error && error.name === 'AbortError') throw error;
            throw new ApiError(networkErrorInfo());
        }
        if (!response.ok) {
            let json;
            try {
                json = await response.json();
            } catch {
                json = undefined;
            }
            const error = new ApiError(errorInfo(response.status, json));
            if (response.status === 401) refused(error);
            throw error;
        }
        return response;
    }

    return {
        request,
        call,
        openStream,
        /** Reads the `GET` endpoint `name`, with `query`. */
        get: (name, params, query, options = {}) => call(name, params, { ...options, query }),
        hasToken: () => Boolean(tokens.get()),
        /** Exchanges a personal token for a session token and keeps only the session token. */
        async signIn(personalToken) {
            const answer = await call('startSession', {}, { bearer: personalToken, body: {} });
            const token = answer.json && answer.json.token;
            if (typeof token !== 'string' || token === '') {
                throw new ApiError({ ...errorInfo(500, null), message: 'flagserver answered the sign-in without a session token' });
            }
            tokens.set(token);
            return answer.json;
        },
        /** Revokes the session on the server, then forgets it here whatever the server said. */
        async signOut() {
            try {
                if (tokens.get()) await call('endSession', {});
            } finally {
                tokens.clear();
            }
        },
    };
}
