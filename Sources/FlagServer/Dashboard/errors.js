// The admin API's error answers as one shape the screens show (like flagctl's AdminClient.error). Pure.
//
// The server answers `{"error": {"code", "message", "path", "problems"?: [{"path", "message"}],
// "currentVersion"?}}` (docs/admin-api.md, "Errors").

const FALLBACK = {
    400: 'the server could not read the request',
    401: 'the token was refused: sign in again',
    403: 'your role does not allow this',
    404: 'not found',
    409: 'the set changed meanwhile',
    422: 'the change would make the flag set invalid; nothing was changed',
    500: 'the server failed to store the change',
    503: 'the server is shutting down or overloaded; try again in a moment',
};

/**
 * `{status, code, message, path, problems, currentVersion, incompatibility}` from a status and the decoded body
 * (any shape: a proxy may answer with HTML, which arrives here as `undefined`). `problems` is always an array of
 * `{path, message}`; `incompatibility` is the gate's findings of an `incompatible_clients` refusal, else null.
 */
export function errorInfo(status, body) {
    const error = body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : {};
    const message = typeof error.message === 'string' && error.message !== ''
        ? error.message
        : `${FALLBACK[status] ?? 'the request failed'} (HTTP ${status})`;
    const problems = Array.isArray(error.problems)
        ? error.problems
            .filter((problem) => problem && typeof problem.message === 'string')
            .map((problem) => ({ path: typeof problem.path === 'string' ? problem.path : '', message: problem.message }))
        : [];
    return {
        status,
        code: typeof error.code === 'string' ? error.code : `http_${status}`,
        message,
        path: typeof error.path === 'string' ? error.path : null,
        problems,
        currentVersion: Number.isInteger(error.currentVersion) ? error.currentVersion : null,
        incompatibility: error.code === 'incompatible_clients' ? incompatibility(error) : null,
    };
}

/**
 * The compatibility gate's findings in a 422 `incompatible_clients` (docs/telemetry.md, "The compatibility gate"):
 * `{constructs, lacking, active, sdks: [{name, version, instances}], apps: [{name, version, instances}]}` (`apps`
 * tallies those that named their app, for a value an enum lacks), members of the wrong shape left out.
 */
function incompatibility(error) {
    const count = (value) => (Number.isInteger(value) && value >= 0 ? value : 0);
    const versions = (items) => (Array.isArray(items) ? items : [])
        .filter((item) => item && typeof item.name === 'string' && typeof item.version === 'string')
        .map((item) => ({ name: item.name, version: item.version, instances: count(item.instances) }));
    return {
        constructs: Array.isArray(error.constructs) ? error.constructs.filter((item) => typeof item === 'string') : [],
        lacking: count(error.lacking),
        active: count(error.active),
        sdks: versions(error.sdks),
        apps: versions(error.apps),
    };
}

/**
 * What the refusal of a change that clients cannot evaluate shows besides its message: `{constructs: ['operator
 * "semver_gte" in flag "new-checkout"'], share: '3 of 850 active instances (0.35 %)', sdks: ['FlagClient 1.2.0:
 * 3'], apps: ['Shop 5.2.0: 3']}`.
 */
export function incompatibilityLines(found) {
    const percent = found.active > 0 ? ((found.lacking / found.active) * 100).toFixed(2) : '0.00';
    return {
        constructs: found.constructs,
        share: `${found.lacking} of ${found.active} active instance${found.active === 1 ? '' : 's'} (${percent} %)`,
        sdks: found.sdks.map((sdk) => `${sdk.name} ${sdk.version}: ${sdk.instances}`),
        apps: found.apps.map((app) => `${app.name} ${app.version}: ${app.instances}`),
    };
}

/** The error of a request that got no answer (server down, network gone). */
export function networkErrorInfo() {
    return {
        status: 0,
        code: 'network',
        message: 'cannot reach flagserver: check that it is running and that this page can reach it',
        path: null,
        problems: [],
        currentVersion: null,
        incompatibility: null,
    };
}

/** The lines an error shows: the message, then one `path: message` per problem (422). */
export function errorLines(info) {
    const problems = (info.problems || []).map((problem) => (problem.path ? `${problem.path}: ${problem.message}` : problem.message));
    return { message: info.message, problems };
}

/** The `ETag: "43"` header's version, or null. */
export function etagVersion(header) {
    const match = typeof header === 'string' ? /^(?:W\/)?"(\d+)"$/.exec(header.trim()) : null;
    return match ? Number(match[1]) : null;
}
