// Webhooks (admins; the server's, not a set's; docs/webhooks.md): the hooks the person may manage and a form that
// makes one, its signing secret shown once; then one hook with its recent deliveries, a test event, a new secret and
// delete. Hooks are not set content, so these writes carry no If-Match and are never proposed for review; the server
// asks for no own token here (unlike tokens and SDK keys), so neither does the page.

import { formDialog } from '/ui/dialog.js';
import { h, replaceChildren, timeElement } from '/ui/dom.js';
import { hashFor } from '/ui/router.js';
import { secretPanel } from '/ui/secret.js';
import { formatUTC, relativeTime } from '/ui/time.js';
import { EVENT_TYPES, checkWebhookForm, deliveryRow, pollDelay, webhookBody, webhookProblems, webhookRow } from '/ui/webhooks.js';

/** What the secret panel says of a webhook's secret, which the server keeps sealed rather than hashed. */
const SECRET_WARNING = 'This is the only time this secret is shown: the server keeps it sealed and never shows it '
    + 'again. Give it to the receiver, which checks the signature of every delivery with it; if it is lost, rotate it.';

function when(iso, now) {
    return typeof iso === 'string' ? timeElement(iso, relativeTime(iso, now), formatUTC(iso)) : '—';
}

function requestError(ctx, error) {
    if (error.status !== 401) ctx.notices.error(error);
}

function notAllowed() {
    return h('p', { class: 'empty', testid: 'not-allowed' }, 'Webhooks are for the admin role.');
}

function showSecret(host, title, secret) {
    replaceChildren(host, secretPanel(title, secret, () => replaceChildren(host), { label: 'Signing secret', warning: SECRET_WARNING }));
}

function statusBadge(row) {
    return h('span', { class: `badge ${row.state === 'disabled' ? 'state-killed' : 'state-default'}`, testid: 'webhook-status', data: { state: row.state } }, row.status);
}

function table(headings, tbody) {
    return h('div', { class: 'table-scroll' }, h('table', { class: 'data stack' },
        h('thead', null, h('tr', null, headings.map((name) => h('th', { scope: 'col' }, name)))),
        tbody));
}

/**
 * The create form; the answer (`{webhook, secret}`) once the server made the hook, or null. The sets offered are
 * those the person may see; an admin limited to sets must tick one (the server refuses a hook of every set from
 * them). What the server refuses shows under the field its path names, and the form stays open.
 */
async function createWebhook(ctx) {
    let sets;
    try {
        sets = ((await ctx.api.get('listSets')).json.sets || []).map((set) => set.name).filter((name) => typeof name === 'string');
    } catch (error) {
        requestError(ctx, error);
        return null;
    }
    const whoami = ctx.store.state.whoami;
    const limited = Array.isArray(whoami && whoami.sets);
    return formDialog({
        title: 'New webhook', confirmLabel: 'Create webhook',
        description: 'flagserver posts each event the hook covers to its URL, signed with a secret shown once when it is made.',
        fields: [
            { name: 'name', label: 'Name', required: true, testid: 'webhook-name-input', hint: 'Lower-case letters, digits, ".", "_" and "-", e.g. chat.' },
            { name: 'url', label: 'URL', type: 'url', required: true, testid: 'webhook-url-input', placeholder: 'https://hooks.example.com/flagstaff' },
            { name: 'sets', label: limited ? 'Sets (at least one of yours)' : 'Sets (none ticked: every set)', type: 'checkboxes', options: sets, testid: 'webhook-sets-input' },
            { name: 'events', label: 'Events (none ticked: every event)', type: 'checkboxes', options: EVENT_TYPES, testid: 'webhook-events-input' },
            { name: 'format', label: 'Format', type: 'select', value: 'json', testid: 'webhook-format-select', options: [
                { value: 'json', label: 'json: Standard Webhooks, signed' },
                { value: 'slack', label: 'slack: a Slack incoming-webhook message' },
            ] },
            { name: 'description', label: 'Description (optional)', testid: 'webhook-description-input', hint: 'What it is for, e.g. the #flags channel.' },
        ],
        check: (values) => checkWebhookForm(values, { limited }),
        submit: async (values) => {
            try {
                return (await ctx.api.call('createWebhook', {}, { body: webhookBody(values) })).json;
            } catch (error) {
                const problems = webhookProblems(error);
                return problems.length ? { problems } : null;
            }
        },
    });
}

/** The webhooks screen (`#/webhooks`): every hook the person may manage, and the create form. */
export function render(ctx) {
    if (!ctx.perms().webhooks) {
        return { node: h('section', { class: 'screen' }, h('h1', { tabindex: '-1' }, 'Webhooks'), notAllowed()), title: 'Webhooks' };
    }
    const tbody = h('tbody');
    const secretHost = h('div');
    const status = h('p', { class: 'loading' }, 'Loading webhooks…');
    const create = h('button', { type: 'button', class: 'button', testid: 'webhook-create' }, 'New webhook');

    async function load() {
        try {
            const hooks = ((await ctx.api.get('listWebhooks')).json.webhooks || []).map(webhookRow);
            tbody.replaceChildren(...hooks.map((row) => h('tr', {
                class: row.state === 'disabled' ? 'webhook-row revoked' : 'webhook-row', testid: 'webhook-row', data: { item: row.name, state: row.state },
            },
            h('th', { scope: 'row', 'data-label': 'Name' }, h('a', { href: hashFor({ name: 'webhook', hook: row.name }), testid: 'webhook-open' }, row.name),
                row.description ? h('div', { class: 'muted small' }, row.description) : null),
            h('td', { 'data-label': 'Format' }, row.format),
            h('td', { 'data-label': 'Sets' }, row.sets),
            h('td', { 'data-label': 'Events' }, row.events),
            h('td', { 'data-label': 'Pending', testid: 'webhook-pending' }, String(row.pending)),
            h('td', { 'data-label': 'Status' }, statusBadge(row)),
            h('td', { 'data-label': 'URL', class: 'url' }, row.url))));
            status.hidden = hooks.length > 0;
            status.textContent = hooks.length ? '' : 'No webhooks yet.';
        } catch (error) {
            status.textContent = 'Could not load the webhooks.';
            requestError(ctx, error);
        }
    }

    create.addEventListener('click', async () => {
        const answer = await createWebhook(ctx);
        if (!answer) return;
        ctx.notices.clearError();
        showSecret(secretHost, `Webhook ${answer.webhook.name}: its signing secret`, answer.secret);
        load();
    });

    load();
    const node = h('section', { class: 'screen' },
        h('h1', { tabindex: '-1' }, 'Webhooks'),
        h('section', { class: 'card' },
            h('div', { class: 'card-head' }, h('h3', null, 'Hooks'), create),
            h('p', { class: 'muted' }, 'Each hook is told of the changes of its sets as they are written: versions, change requests, tokens and SDK keys.'),
            secretHost, status,
            table(['Name', 'Format', 'Sets', 'Events', 'Pending', 'Status', 'URL'], tbody)));
    return { node, title: 'Webhooks' };
}

function deliveryTr(delivery, now) {
    const row = deliveryRow(delivery);
    return h('tr', { class: 'delivery-row', testid: 'delivery-row', data: { id: row.id, state: row.state } },
        h('th', { scope: 'row', 'data-label': 'Id', class: 'mono' }, row.id),
        h('td', { 'data-label': 'Type' }, row.type),
        h('td', { 'data-label': 'Set' }, row.set),
        h('td', { 'data-label': 'Created' }, when(row.createdAt, now)),
        h('td', { 'data-label': 'State', testid: 'delivery-state' }, row.state),
        h('td', { 'data-label': 'Attempts' }, String(row.attempts)),
        h('td', { 'data-label': 'Next attempt' }, when(row.nextAttemptAt, now)),
        h('td', { 'data-label': 'Last status', testid: 'delivery-status' }, row.lastStatus),
        h('td', { 'data-label': 'Last error', class: 'url' }, row.lastError || '—'));
}

function details(row, now) {
    const item = (term, ...value) => [h('dt', null, term), h('dd', null, ...value)];
    return h('dl', { class: 'meta', testid: 'webhook-details' },
        item('URL', row.url),
        item('Format', row.format),
        item('Sets', row.sets),
        item('Events', row.events),
        row.description ? item('Description', row.description) : null,
        item('Status', statusBadge(row)),
        item('Pending', String(row.pending)),
        item('Created', `by ${row.createdBy}, `, when(row.createdAt, now)),
        row.previousSecretUntil ? item('Previous secret', 'signs too until ', when(row.previousSecretUntil, now)) : null);
}

/** One hook's screen (`#/webhooks/NAME`): what it covers, its recent deliveries, and its actions. */
export function renderWebhook(ctx, route) {
    const name = route.hook;
    const title = `Webhook · ${name}`;
    const heading = h('h1', { tabindex: '-1' }, `Webhook ${name}`);
    const breadcrumb = h('p', { class: 'breadcrumb' }, h('a', { href: hashFor({ name: 'webhooks' }) }, 'Webhooks'), ' › ');
    if (!ctx.perms().webhooks) return { node: h('section', { class: 'screen' }, breadcrumb, heading, notAllowed()), title };
    const info = h('div');
    const secretHost = h('div');
    const tbody = h('tbody');
    const status = h('p', { class: 'loading' }, 'Loading the webhook…');
    const button = (testid, label, danger) => h('button', { type: 'button', class: danger ? 'button danger' : 'button', testid }, label);
    const send = button('webhook-test', 'Send test');
    const rotate = button('webhook-rotate', 'Rotate secret');
    const remove = button('webhook-delete', 'Delete', true);
    const refresh = button('deliveries-refresh', 'Refresh');
    let timer = null;
    let gone = false;
    ctx.onDispose(() => {
        gone = true;
        clearTimeout(timer);
    });

    async function load() {
        clearTimeout(timer);
        try {
            const answer = await ctx.api.get('getWebhook', { name });
            if (gone) return;
            const now = Date.now();
            replaceChildren(info, details(webhookRow(answer.json.webhook), now));
            const deliveries = answer.json.deliveries || [];
            tbody.replaceChildren(...deliveries.map((delivery) => deliveryTr(delivery, now)));
            status.hidden = deliveries.length > 0;
            status.textContent = deliveries.length ? '' : 'Nothing was sent to this hook yet.';
            // While a delivery waits to be sent, ask again around its next attempt, so that its outcome shows.
            const delay = pollDelay(deliveries, now);
            if (delay !== null) timer = setTimeout(load, delay);
        } catch (error) {
            if (gone) return;
            status.hidden = false;
            status.textContent = error.status === 404 ? `There is no webhook ${name}.` : 'Could not load the webhook.';
            requestError(ctx, error);
        }
    }

    /** Asks for a reason in a dialog, then sends `endpoint` with it; the answer, or null (cancelled, or refused). */
    async function act(dialog, endpoint, reasonIn) {
        const values = await formDialog(dialog);
        if (!values) return null;
        const reason = values.reason || undefined;
        try {
            const answer = await ctx.api.call(endpoint, { name }, reasonIn === 'query' ? { query: { reason } } : { body: { reason } });
            ctx.notices.clearError();
            return answer;
        } catch (error) {
            requestError(ctx, error);
            return null;
        }
    }

    send.addEventListener('click', async () => {
        const answer = await act({
            title: `Send a test event to ${name}?`, confirmLabel: 'Send test',
            description: 'A webhook.test event for this hook alone, queued behind its other pending deliveries.',
        }, 'testWebhook', 'body');
        if (!answer) return;
        ctx.notices.toast(`Queued test event ${answer.json.id} for ${name}.`);
        load();
    });
    rotate.addEventListener('click', async () => {
        const answer = await act({
            title: `Rotate the secret of ${name}?`, confirmLabel: 'Rotate secret', danger: true,
            description: 'A new secret signs every delivery from now on; the current one signs them too for 24 hours, so that the receiver can move over.',
        }, 'rotateWebhookSecret', 'body');
        if (!answer) return;
        showSecret(secretHost, `Webhook ${name}: its new signing secret`, answer.json.secret);
        load();
    });
    remove.addEventListener('click', async () => {
        const answer = await act({
            title: `Delete webhook ${name}?`, confirmLabel: 'Delete webhook', danger: true,
            description: 'Nothing more is sent to it, and its pending deliveries are dropped.',
        }, 'deleteWebhook', 'query');
        if (!answer) return;
        ctx.notices.toast(`Deleted webhook ${name}.`);
        location.hash = hashFor({ name: 'webhooks' });
    });
    refresh.addEventListener('click', () => load());

    load();
    const node = h('section', { class: 'screen' },
        breadcrumb, heading,
        h('div', { class: 'toolbar' }, send, rotate, remove),
        secretHost, info,
        h('section', { class: 'card' },
            h('div', { class: 'card-head' }, h('h3', null, 'Recent deliveries'), refresh),
            h('p', { class: 'muted' }, 'Newest first. A delivery is tried again with backoff for a day; a receiver that answers 410 disables the hook.'),
            status,
            table(['Id', 'Type', 'Set', 'Created', 'State', 'Attempts', 'Next attempt', 'Last status', 'Last error'], tbody)));
    return { node, title };
}
