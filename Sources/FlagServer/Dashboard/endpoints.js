// The admin API's endpoints as the server describes them (`GET /ui/endpoints.json`, made from FlagAPI's table):
// every path and every role the dashboard uses comes from here, so that a template is written once, in Swift. Pure.

/** The roles from least to most; a role this dashboard does not know ranks as the least. */
const ROLE_RANK = { viewer: 0, editor: 1, admin: 2 };

/** Where the table is served. */
export const ENDPOINTS_PATH = '/ui/endpoints.json';

/**
 * The endpoints of `table` (`{endpoints: {name: {method, template, role?, wholeServer, confirmsPerson}}}`):
 * `method(name)`, `path(name, params)` with each `{set}`, `{key}`, `{name}` or `{n}` filled in from `params` and
 * percent-encoded, and `allows(name, role)`. An unknown name or a missing parameter throws, naming it.
 */
export function createEndpoints(table) {
    const entries = table && typeof table.endpoints === 'object' && table.endpoints !== null ? table.endpoints : null;
    if (!entries) throw new Error('the endpoint table has no "endpoints" object');

    function entry(name) {
        const found = Object.hasOwn(entries, name) ? entries[name] : undefined;
        if (!found || typeof found.template !== 'string' || typeof found.method !== 'string') {
            throw new Error(`the endpoint table has no endpoint "${name}"`);
        }
        return found;
    }

    return {
        method: (name) => entry(name).method,
        path(name, params = {}) {
            return entry(name).template.replace(/\{([a-z]+)\}/g, (_, parameter) => {
                const value = params[parameter];
                if (value === undefined || value === null || value === '') {
                    throw new Error(`the endpoint "${name}" needs the path parameter {${parameter}}`);
                }
                return encodeURIComponent(String(value));
            });
        },
        /** Whether a token of `role` may call the endpoint: at least its least role. */
        allows(name, role) {
            const least = entry(name).role;
            if (typeof least !== 'string') return false;
            return (ROLE_RANK[role] ?? 0) >= (ROLE_RANK[least] ?? Infinity);
        },
        confirmsPerson: (name) => entry(name).confirmsPerson === true,
    };
}

/** Fetches and reads the table; throws an Error saying what failed. */
export async function loadEndpoints(fetchImpl) {
    let response;
    try {
        response = await fetchImpl(ENDPOINTS_PATH, { cache: 'no-store', credentials: 'same-origin' });
    } catch {
        throw new Error('flagserver cannot be reached: the dashboard could not load its endpoint table');
    }
    if (!response.ok) throw new Error(`flagserver answered ${ENDPOINTS_PATH} with ${response.status}`);
    return createEndpoints(await response.json());
}
