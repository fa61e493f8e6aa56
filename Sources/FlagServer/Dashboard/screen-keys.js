// SDK keys of a set and personal tokens (admin role only): list, create (the secret shown once), revoke.
// These are not flag-set content, so they carry no If-Match: a flag changed meanwhile does not make them stale.
// Creating or revoking either asks for the person's own token first (reauthview.js): the server asks a session for
// it, and the dashboard always acts through a session.

import { formDialog } from '/ui/dialog.js';
import { h, replaceChildren, timeElement } from '/ui/dom.js';
import { setHeader } from '/ui/layout.js';
import { withOwnToken } from '/ui/reauthview.js';
import { secretPanel } from '/ui/secret.js';
import { formatUTC, relativeTime } from '/ui/time.js';

function when(iso, now) {
    return typeof iso === 'string' ? timeElement(iso, relativeTime(iso, now), formatUTC(iso)) : '—';
}

/**
 * Sends the endpoint `endpoint` with its path parameters `params` and `options` once the person has entered their
 * own token; the answer, or null when they cancelled. `prompt`: `{action, confirmLabel, danger}` (reauthview.js).
 */
function withPersonsToken(ctx, prompt, endpoint, params, options) {
    const person = ctx.store.state.whoami && ctx.store.state.whoami.name;
    return withOwnToken({ ...prompt, person }, (ownToken) => ctx.api.call(endpoint, params, { ...options, ownToken }));
}

function requestError(ctx, error) {
    if (error.status !== 401) ctx.notices.error(error);
}

/**
 * Asks the person to confirm revoking `what` (`SDK key NAME`, `token NAME`), then revokes it through `endpoint` with
 * its path parameters `params` and their own token; `revoked` runs once it is.
 */
async function revoke(ctx, what, description, endpoint, params, revoked) {
    const values = await formDialog({ title: `Revoke ${what}?`, description, confirmLabel: 'Revoke', danger: true });
    if (!values) return;
    try {
        const answer = await withPersonsToken(ctx, { action: `Revoking ${what}`, confirmLabel: 'Revoke', danger: true },
            endpoint, params, { query: { reason: values.reason || undefined } });
        if (!answer) return;
        ctx.notices.clearError();
        ctx.notices.toast(`Revoked ${what}.`);
        revoked();
    } catch (error) {
        requestError(ctx, error);
    }
}

/** A Revoke button for `record` that runs `onRevoke` with its name, or null when the record is revoked already. */
function revokeButton(testid, record, onRevoke) {
    if (typeof record.revokedAt === 'string') return null;
    const button = h('button', { type: 'button', class: 'button small danger', testid, data: { item: record.name } }, 'Revoke');
    button.addEventListener('click', () => onRevoke(record.name));
    return button;
}

/**
 * Fills `tbody` with a row a record of `list()` (`row(record, now)`); `status` says `empty` when there are none, and
 * `failed` when they could not be loaded.
 */
async function loadRows(ctx, { tbody, status, list, row, empty, failed }) {
    try {
        const records = await list();
        const now = Date.now();
        tbody.replaceChildren(...records.map((record) => row(record, now)));
        status.hidden = records.length > 0;
        status.textContent = records.length ? '' : empty;
    } catch (error) {
        status.textContent = failed;
        requestError(ctx, error);
    }
}

/**
 * Creates a key or token through `endpoint` with the person's own token (`prompt`), shows its secret once in
 * `secretHost` under `titleOf(answer)`, then runs `created`.
 */
async function createSecret(ctx, prompt, endpoint, params, body, { secretHost, titleOf, created }) {
    try {
        const answer = await withPersonsToken(ctx, prompt, endpoint, params, { body });
        if (!answer) return;
        ctx.notices.clearError();
        replaceChildren(secretHost, secretPanel(titleOf(answer.json), answer.json.token, () => replaceChildren(secretHost)));
        created();
    } catch (error) {
        requestError(ctx, error);
    }
}

function keysSection(ctx, setName) {
    const tbody = h('tbody');
    const secretHost = h('div');
    const status = h('p', { class: 'loading' }, 'Loading SDK keys…');
    const create = h('button', { type: 'button', class: 'button', testid: 'key-create' }, 'New SDK key');

    function load() {
        return loadRows(ctx, {
            tbody, status, empty: 'No SDK keys for this set.', failed: 'Could not load the SDK keys.',
            list: async () => (await ctx.api.get('listKeys', { set: setName })).json.keys || [],
            row: (key, now) => {
                const revoked = typeof key.revokedAt === 'string';
                return h('tr', { class: revoked ? 'key-row revoked' : 'key-row', testid: 'key-row', data: { item: key.name } },
                    h('th', { scope: 'row', 'data-label': 'Name' }, key.name),
                    h('td', { 'data-label': 'Created' }, when(key.createdAt, now)),
                    h('td', { 'data-label': 'Revoked' }, revoked ? when(key.revokedAt, now) : 'no'),
                    h('td', { 'data-label': '' }, revokeButton('key-revoke', key, revokeKey)));
            },
        });
    }

    function revokeKey(name) {
        return revoke(ctx, `SDK key ${name}`, 'Clients using it are refused from their next request.',
            'revokeKey', { set: setName, name }, load);
    }

    create.addEventListener('click', async () => {
        const values = await formDialog({
            title: `New SDK key for ${setName}`, confirmLabel: 'Create key',
            fields: [{ name: 'name', label: 'Name', required: true, testid: 'key-name-input', hint: 'Unique on the server, e.g. ios-app-prod.' }],
        });
        if (!values) return;
        await createSecret(ctx, { action: 'Creating an SDK key', confirmLabel: 'Create key' },
            'createKey', { set: setName }, { name: values.name, reason: values.reason || undefined },
            { secretHost, titleOf: (key) => `SDK key ${key.name} for ${setName}`, created: load });
    });

    load();
    return h('section', { class: 'card' },
        h('div', { class: 'card-head' }, h('h3', null, 'SDK keys'), create),
        h('p', { class: 'muted' }, `Read-only keys for clients of ${setName}.`),
        secretHost, status,
        h('div', { class: 'table-scroll' }, h('table', { class: 'data stack' },
            h('thead', null, h('tr', null, ['Name', 'Created', 'Revoked', ''].map((name) => h('th', { scope: 'col' }, name)))),
            tbody)));
}

/** The personal tokens section (admin): every token, sessions included. */
export function tokensSection(ctx) {
    const tbody = h('tbody');
    const secretHost = h('div');
    const status = h('p', { class: 'loading' }, 'Loading tokens…');
    const create = h('button', { type: 'button', class: 'button', testid: 'token-create' }, 'New token');

    function load() {
        return loadRows(ctx, {
            tbody, status, empty: 'No tokens.', failed: 'Could not load the tokens.',
            list: async () => (await ctx.api.get('listTokens')).json.tokens || [],
            row: (token, now) => {
                const revoked = typeof token.revokedAt === 'string';
                const classes = ['token-row', revoked ? 'revoked' : '', token.sessionOf ? 'session' : ''].filter(Boolean).join(' ');
                return h('tr', { class: classes, testid: 'token-row', data: { item: token.name } },
                    h('th', { scope: 'row', 'data-label': 'Name' }, token.name, token.sessionOf ? h('div', { class: 'muted small' }, `session of ${token.sessionOf}`) : null),
                    h('td', { 'data-label': 'Role' }, token.role ?? ''),
                    h('td', { 'data-label': 'Sets' }, Array.isArray(token.sets) ? token.sets.join(', ') : 'all'),
                    h('td', { 'data-label': 'Created' }, when(token.createdAt, now)),
                    h('td', { 'data-label': 'Expires' }, token.expiresAt ? when(token.expiresAt, now) : 'never'),
                    h('td', { 'data-label': 'Last used' }, when(token.lastUsedAt, now)),
                    h('td', { 'data-label': 'Revoked' }, revoked ? when(token.revokedAt, now) : 'no'),
                    h('td', { 'data-label': '' }, revokeButton('token-revoke', token, revokeToken)));
            },
        });
    }

    function revokeToken(name) {
        return revoke(ctx, `token ${name}`, 'It is refused from its next request, and so are its sessions.',
            'revokeToken', { name }, load);
    }

    create.addEventListener('click', async () => {
        const values = await formDialog({
            title: 'New personal token', confirmLabel: 'Create token',
            fields: [
                { name: 'name', label: 'Name', required: true, testid: 'token-name-input', hint: 'The person or script, e.g. alice; it is the actor in the audit log.' },
                { name: 'role', label: 'Role', type: 'select', options: ['viewer', 'editor', 'admin'], value: 'viewer', testid: 'token-role-select' },
                { name: 'sets', label: 'Sets (optional)', testid: 'token-sets-input', placeholder: 'staging, ios-prod', hint: 'Comma-separated; empty for every set.' },
                { name: 'expires', label: 'Expires after (optional)', testid: 'token-expires-input', placeholder: '90d', hint: 'A duration such as 30d or 6w; empty for never.' },
            ],
        });
        if (!values) return;
        const body = { name: values.name, role: values.role, reason: values.reason || undefined };
        const sets = values.sets.split(',').map((item) => item.trim()).filter(Boolean);
        if (sets.length) body.sets = sets;
        if (values.expires) body.expires = values.expires;
        await createSecret(ctx, { action: 'Creating a token', confirmLabel: 'Create token' }, 'createToken', {}, body,
            { secretHost, titleOf: (token) => `Token ${token.name} (${token.role})`, created: load });
    });

    load();
    return h('section', { class: 'card' },
        h('div', { class: 'card-head' }, h('h3', null, 'Personal tokens'), create),
        h('p', { class: 'muted' }, 'People and scripts sign in with these; sessions are the dashboard\'s short-lived tokens made from them.'),
        secretHost, status,
        h('div', { class: 'table-scroll' }, h('table', { class: 'data stack' },
            h('thead', null, h('tr', null, ['Name', 'Role', 'Sets', 'Created', 'Expires', 'Last used', 'Revoked', ''].map((name) => h('th', { scope: 'col' }, name)))),
            tbody)));
}

function notAllowed() {
    return h('p', { class: 'empty', testid: 'not-allowed' }, 'SDK keys and tokens are for the admin role.');
}

/** The keys screen of `route.set`: its SDK keys, then the server's personal tokens. */
export function render(ctx, route) {
    const allowed = ctx.perms().keys;
    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'SDK keys and tokens'),
        allowed ? keysSection(ctx, route.set) : notAllowed(),
        allowed && ctx.perms().tokens ? tokensSection(ctx) : null);
    return { node, title: `Keys · ${route.set}` };
}

/** The tokens screen (`#/tokens`). */
export function renderTokens(ctx) {
    const node = h('section', { class: 'screen' },
        h('h1', { tabindex: '-1' }, 'Personal tokens'),
        ctx.perms().tokens ? tokensSection(ctx) : notAllowed());
    return { node, title: 'Tokens' };
}
