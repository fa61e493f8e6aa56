// Hash routes of the dashboard (`#/sets/demo/flags/new-checkout`). The server serves only files, so every screen
// lives after the `#`. Pure: parses and builds hashes, touches no `location`.

function decode(segment) {
    try {
        return decodeURIComponent(segment);
    } catch {
        return null;
    }
}

function encode(segment) {
    return encodeURIComponent(segment);
}

/** The screens of a set, by the path segment after `#/sets/{set}/`. */
export const SET_SCREENS = ['flags', 'history', 'changes', 'cohorts', 'evaluate', 'audit', 'keys', 'compare'];

/**
 * A route from a hash: `{name, set?, key?, cohort?, hook?, query}` with `name` one of `signin`, `sets`, `audit`,
 * `tokens`, `webhooks`, `webhook` (`#/webhooks/chat`, `hook` its name), `flags`, `flag`, `history`, `cohorts`,
 * `cohort`, `evaluate`, `set-audit`, `keys`, `compare`, `notfound`. An empty hash is `sets`. `query` holds the parameters after `?` (`#/sets/demo/flags?state=expired`).
 */
export function parseHash(hash) {
    const text = typeof hash === 'string' ? hash.replace(/^#/, '') : '';
    const mark = text.indexOf('?');
    const path = mark === -1 ? text : text.slice(0, mark);
    const query = {};
    if (mark !== -1) {
        for (const [name, value] of new URLSearchParams(text.slice(mark + 1))) query[name] = value;
    }
    const parts = path.split('/').filter((part) => part !== '').map(decode);
    if (parts.some((part) => part === null || part === '')) return { name: 'notfound', query };
    if (parts.length === 0) return { name: 'sets', query };
    const [first, set, screen, item, ...rest] = parts;
    if (parts.length === 1 && (first === 'signin' || first === 'sets' || first === 'audit' || first === 'tokens' || first === 'webhooks')) {
        return { name: first, query };
    }
    // A webhook is the server's, not a set's: its name is the second segment.
    if (first === 'webhooks') return parts.length === 2 ? { name: 'webhook', hook: set, query } : { name: 'notfound', query };
    if (first !== 'sets' || rest.length > 0) return { name: 'notfound', query };
    if (screen === undefined) return { name: 'flags', set, query };
    if (screen === 'flags') return item === undefined ? { name: 'flags', set, query } : { name: 'flag', set, key: item, query };
    if (screen === 'cohorts') {
        return item === undefined ? { name: 'cohorts', set, query } : { name: 'cohort', set, cohort: item, query };
    }
    if (item !== undefined || !SET_SCREENS.includes(screen)) return { name: 'notfound', query };
    return { name: screen === 'audit' ? 'set-audit' : screen, set, query };
}

function withQuery(path, query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query || {})) {
        if (value !== undefined && value !== null && value !== '') params.append(name, String(value));
    }
    const text = params.toString();
    return text ? `${path}?${text}` : path;
}

/** The hash of a route (the inverse of parseHash): `hashFor({name: 'flag', set: 'demo', key: 'x'})`. */
export function hashFor(route) {
    const set = route.set === undefined ? '' : encode(route.set);
    switch (route.name) {
        case 'signin':
        case 'sets':
        case 'audit':
        case 'tokens':
        case 'webhooks':
            return withQuery(`#/${route.name}`, route.query);
        case 'webhook':
            return withQuery(`#/webhooks/${encode(route.hook)}`, route.query);
        case 'flag':
            return withQuery(`#/sets/${set}/flags/${encode(route.key)}`, route.query);
        case 'cohort':
            return withQuery(`#/sets/${set}/cohorts/${encode(route.cohort)}`, route.query);
        case 'set-audit':
            return withQuery(`#/sets/${set}/audit`, route.query);
        default:
            if (SET_SCREENS.includes(route.name)) return withQuery(`#/sets/${set}/${route.name}`, route.query);
            return '#/sets';
    }
}
