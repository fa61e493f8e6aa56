// The composition root: builds the API client, the store, the live stream and the notices once, then routes each
// hash to its screen. Screens get what they need through `ctx`; nothing here is global to them.

import { createActions } from '/ui/actions.js';
import { createApi, createTokenStore } from '/ui/api.js';
import { h, replaceChildren } from '/ui/dom.js';
import { loadEndpoints } from '/ui/endpoints.js';
import { renderHeader } from '/ui/layout.js';
import { createLive } from '/ui/live.js';
import { createNotices } from '/ui/notices.js';
import { isPlainHTTPRemote } from '/ui/origin.js';
import { permissions } from '/ui/roles.js';
import { parseHash } from '/ui/router.js';
import * as audit from '/ui/screen-audit.js';
import * as changes from '/ui/screen-changes.js';
import * as cohorts from '/ui/screen-cohorts.js';
import * as compare from '/ui/screen-compare.js';
import * as evaluate from '/ui/screen-evaluate.js';
import * as flag from '/ui/screen-flag.js';
import * as flags from '/ui/screen-flags.js';
import * as history from '/ui/screen-history.js';
import * as keys from '/ui/screen-keys.js';
import * as sets from '/ui/screen-sets.js';
import * as signin from '/ui/screen-signin.js';
import * as webhooks from '/ui/screen-webhooks.js';
import { createStore } from '/ui/store.js';

const elements = {
    header: document.getElementById('app-header'),
    banner: document.querySelector('[data-testid="error-banner"]'),
    warning: document.querySelector('[data-testid="http-warning"]'),
    toasts: document.getElementById('toasts'),
    conflict: document.getElementById('conflict-region'),
    main: document.getElementById('main'),
    skip: document.getElementById('skip-link'),
};

function notFound() {
    return {
        node: h('section', { class: 'screen' }, h('h1', { tabindex: '-1' }, 'Not found'),
            h('p', null, 'This address names no screen of the dashboard. ', h('a', { href: '#/sets' }, 'Go to the flag sets'))),
        title: 'Not found',
    };
}

/** Each route's screen. Screens of a set open that set (live.open) before they render. */
const SCREENS = {
    signin: signin.render,
    sets: sets.render,
    audit: audit.render,
    tokens: keys.renderTokens,
    webhooks: webhooks.render,
    webhook: webhooks.renderWebhook,
    flags: flags.render,
    flag: flag.render,
    history: history.render,
    changes: changes.render,
    cohorts: cohorts.render,
    cohort: cohorts.renderCohort,
    evaluate: evaluate.render,
    'set-audit': audit.render,
    keys: keys.render,
    compare: compare.render,
    notfound: notFound,
};

const store = createStore();
const notices = createNotices({ banner: elements.banner, toasts: elements.toasts, warning: elements.warning });
const tokens = createTokenStore(window.sessionStorage);
const fetchImpl = (input, init) => window.fetch(input, init);
// Every path and role comes from the server's table, so that the page cannot call a path the server does not have.
const endpoints = await loadEndpoints(fetchImpl).catch((error) => {
    notices.error({ message: error.message }, { keep: true });
    throw error;
});
const api = createApi({ fetchImpl, tokens, onUnauthorized: signedOut, endpoints });
const live = createLive({ api, store, notices });
const actions = createActions({
    api, store, live, notices, region: elements.conflict,
    canForce: () => permissions(store.state.whoami && store.state.whoami.role, endpoints).flagActions,
});

/** Where to go after signing in: the address that sent the person to sign-in. */
let returnTo = null;
let disposers = [];
let routeCount = 0;

function navigate(hash) {
    if (location.hash === hash) route();
    else location.hash = hash;
}

/** Any 401: forget the token and everything about the person, then sign in again, showing the server's reason. */
function signedOut(error) {
    tokens.clear();
    live.close();
    store.reset();
    notices.error(error, { keep: true });
    if (parseHash(location.hash).name !== 'signin') {
        returnTo = location.hash;
        location.hash = '#/signin';
    }
}

async function signOut() {
    try {
        await api.signOut();
    } catch (error) {
        if (error.status !== 401) notices.error(error, { keep: true });
    }
    live.close();
    store.reset();
    returnTo = null;
    navigate('#/signin');
}

async function signedIn() {
    const answer = await api.get('whoami');
    store.setWhoami(answer.json);
    const target = returnTo && parseHash(returnTo).name !== 'signin' ? returnTo : '#/sets';
    returnTo = null;
    navigate(target);
}

/** Whether each set requires reviews (`GET …/settings`), asked once per set and page: dialogs then offer only to
 * propose. A wrong guess costs nothing but a refusal: the server decides. */
const reviewSettings = new Map();
function reviewMode(set) {
    if (!reviewSettings.has(set)) {
        reviewSettings.set(set, api.get('getSettings', { set }).then((answer) => (answer.json.reviews === 'required' ? 'required' : true), () => true));
    }
    return reviewSettings.get(set);
}

const base = {
    api, store, live, notices, actions, navigate, signOut, signedIn, reviewMode,
    perms: () => permissions(store.state.whoami && store.state.whoami.role, endpoints),
};

function mount(render, routeInfo) {
    for (const dispose of disposers) dispose();
    disposers = [];
    const ctx = { ...base, onDispose: (dispose) => disposers.push(dispose) };
    const view = render(ctx, routeInfo);
    if (view.dispose) disposers.push(view.dispose);
    replaceChildren(elements.main, view.node);
    document.title = `${view.title} · Flagstaff`;
    const target = view.focus || elements.main.querySelector('h1[tabindex], h2[tabindex]');
    if (target) target.focus();
}

async function route() {
    const count = ++routeCount;
    const routeInfo = parseHash(location.hash);
    const hasToken = api.hasToken();
    if (!hasToken && routeInfo.name !== 'signin') {
        returnTo = location.hash;
        location.hash = '#/signin';
        return;
    }
    if (hasToken && routeInfo.name === 'signin') {
        location.hash = '#/sets';
        return;
    }
    notices.navigated();
    actions.closeConflict();
    if (hasToken && !store.state.whoami) {
        try {
            store.setWhoami((await api.get('whoami')).json);
        } catch (error) {
            if (error.status !== 401) notices.error(error);
            return;
        }
    }
    if (count !== routeCount) return;
    if (routeInfo.set !== undefined) {
        try {
            await live.open(routeInfo.set);
        } catch (error) {
            if (error.name === 'AbortError' || count !== routeCount) return;
            if (error.status === 401) return;
            notices.error(error, { keep: false });
            mount(() => ({
                node: h('section', { class: 'screen' }, h('h1', { tabindex: '-1' }, `Set ${routeInfo.set}`),
                    h('p', null, 'The set could not be opened. ', h('a', { href: '#/sets' }, 'Back to the flag sets'))),
                title: routeInfo.set,
            }), routeInfo);
            return;
        }
    } else {
        live.close();
    }
    if (count !== routeCount) return;
    mount(SCREENS[routeInfo.name] || notFound, routeInfo);
}

store.subscribe((change) => {
    if (change.topic === 'whoami') renderHeader(base, elements.header);
});
elements.skip.addEventListener('click', () => {
    const target = elements.main.querySelector('h1[tabindex], h2[tabindex]') || elements.main;
    target.focus();
});
notices.warnPlainHTTP(isPlainHTTPRemote(location.protocol, location.hostname));
renderHeader(base, elements.header);
window.addEventListener('hashchange', route);
route();
