// Sign-in: a personal token pasted into a password field is exchanged at once for a session token
// (POST /v1/admin/sessions); only the session token is kept, in sessionStorage. The personal token is not stored,
// logged, or left in the field.

import { h } from '/ui/dom.js';
import { formatUTC } from '/ui/time.js';

/** The sign-in screen; `ctx.signedIn(session)` continues into the dashboard. */
export function render(ctx) {
    const input = h('input', {
        type: 'password', id: 'signin-token', name: 'token', testid: 'signin-token', required: true,
        autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'signin-token-hint',
    });
    const submit = h('button', { type: 'submit', class: 'button primary', testid: 'signin-submit' }, 'Sign in');
    const form = h('form', { class: 'signin-form' },
        h('div', { class: 'field' },
            h('label', { for: 'signin-token' }, 'Personal token'),
            input,
            h('small', { id: 'signin-token-hint', class: 'hint' },
                'Paste your personal token (fsa_…). The dashboard exchanges it for a session token that ends when '
                + 'this tab closes or you sign out, and keeps only that.')),
        submit);
    form.addEventListener('submit', async (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token === '') return;
        submit.disabled = true;
        try {
            const session = await ctx.api.signIn(token);
            input.value = '';
            ctx.notices.clearError();
            if (session.expiresAt) ctx.notices.toast(`Signed in as ${session.actor ?? session.name}; the session ends ${formatUTC(session.expiresAt)}.`);
            await ctx.signedIn();
        } catch (error) {
            input.value = '';
            ctx.notices.error(error);
            input.focus();
        } finally {
            submit.disabled = false;
        }
    });
    const node = h('section', { class: 'signin' }, h('h1', { tabindex: '-1' }, 'Sign in to Flagstaff'), form);
    return { node, title: 'Sign in', focus: input };
}
