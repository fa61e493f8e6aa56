// The frame around the screens: the header (home, audit log, tokens, webhooks, who is signed in, sign out) and the header of
// a set's screens (its name, version, live status and the tabs between its screens).

import { h, replaceChildren } from '/ui/dom.js';
import { hashFor } from '/ui/router.js';

const LIVE_TEXT = {
    offline: 'not following changes',
    connecting: 'connecting…',
    live: 'live',
    reconnecting: 'reconnecting…',
};

/** Fills the page header for the signed-in person (or for nobody). */
export function renderHeader(ctx, header) {
    const whoami = ctx.store.state.whoami;
    const brand = h('a', { href: '#/sets', class: 'brand' }, 'Flagstaff');
    if (!whoami) {
        replaceChildren(header, brand);
        return;
    }
    const perms = ctx.perms();
    const links = [
        h('a', { href: '#/sets', testid: 'nav-sets' }, 'Sets'),
        h('a', { href: '#/audit', testid: 'nav-audit-all' }, 'Audit log'),
        perms.tokens ? h('a', { href: '#/tokens', testid: 'nav-tokens' }, 'Tokens') : null,
        perms.webhooks ? h('a', { href: '#/webhooks', testid: 'nav-webhooks' }, 'Webhooks') : null,
    ];
    const signout = h('button', { type: 'button', class: 'button small', testid: 'signout' }, 'Sign out');
    signout.addEventListener('click', () => ctx.signOut());
    const scope = Array.isArray(whoami.sets) ? ` · sets: ${whoami.sets.join(', ')}` : '';
    replaceChildren(header,
        brand,
        h('nav', { class: 'top-nav', 'aria-label': 'Main' }, links),
        h('div', { class: 'me' },
            h('span', { class: 'whoami', testid: 'whoami', data: { role: whoami.role ?? '' } },
                h('span', { class: 'name' }, whoami.name ?? '?'), ' ', h('span', { class: 'role' }, whoami.role ?? '?'), scope),
            signout));
}

/** The tabs of a set: `[screen name, label, test id]`. */
const TABS = [
    ['flags', 'Flags', 'nav-flags'],
    ['history', 'History', 'nav-history'],
    ['changes', 'Changes', 'nav-changes'],
    ['cohorts', 'Cohorts', 'nav-cohorts'],
    ['evaluate', 'Evaluate', 'nav-evaluate'],
    ['set-audit', 'Audit', 'nav-audit'],
    ['compare', 'Compare', 'nav-compare'],
    ['keys', 'SDK keys', 'nav-keys'],
];

/** Which tab a route belongs to. */
function tabOf(route) {
    if (route.name === 'flag') return 'flags';
    if (route.name === 'cohort') return 'cohorts';
    return route.name;
}

/**
 * The header of a set's screens, kept current from the store (version, live status) until the screen goes.
 */
export function setHeader(ctx, route) {
    const perms = ctx.perms();
    const version = h('span', { class: 'version', testid: 'set-version' });
    const live = h('span', { class: 'live-status', testid: 'live-status', role: 'status' });
    const active = tabOf(route);
    const tabs = TABS
        .filter(([name]) => name !== 'keys' || perms.keys)
        .map(([name, label, testid]) => h('li', null, h('a', {
            href: hashFor({ name, set: route.set }), testid, class: 'tab', 'aria-current': name === active ? 'page' : undefined,
        }, label)));
    const node = h('div', { class: 'set-header' },
        h('p', { class: 'breadcrumb' }, h('a', { href: '#/sets' }, 'Sets'), ' › '),
        h('div', { class: 'set-title' }, h('h1', null, route.set), version, live),
        h('nav', { class: 'tabs', 'aria-label': `Set ${route.set}` }, h('ul', null, tabs)));

    function update() {
        const set = ctx.store.state.set;
        version.textContent = set && set.name === route.set ? `version ${set.version}` : '';
        live.textContent = LIVE_TEXT[ctx.store.state.live] ?? '';
        live.dataset.status = ctx.store.state.live;
    }
    ctx.onDispose(ctx.store.subscribe(update));
    update();
    return node;
}

/** Runs `load` now, and again whenever the open set reaches a new version, until the screen goes. */
export function loadOnEachVersion(ctx, load) {
    let lastVersion = ctx.store.state.set?.version;
    ctx.onDispose(ctx.store.subscribe((change) => {
        const version = ctx.store.state.set?.version;
        if (change.topic === 'set' && version !== undefined && version !== lastVersion) {
            lastVersion = version;
            load();
        }
    }));
    load();
}
