// The prompt for the person's own token before making or revoking a token or an SDK key: the server asks a session
// for it, so that a stolen session cannot make itself lasting access. The token goes into one request's header and
// nowhere else: not the store, not sessionStorage, and the field is emptied as soon as it is read.

import { h, uniqueId } from '/ui/dom.js';
import { isReauthenticationRefusal } from '/ui/reauth.js';

/**
 * Asks for the person's own token, then calls `send(token)` (which makes the request with it as `ownToken`) and
 * resolves to what `send` answers, or to null when the person cancels. A refusal of the token (403
 * `reauthentication_failed`) shows the server's message in the prompt, which stays open for another try; any other
 * error closes the prompt and is thrown to the caller. `action` says what needs the token ("Creating an SDK key"),
 * `person` is the signed-in name.
 */
export function withOwnToken({ action, person, confirmLabel = 'Confirm', danger = false }, send) {
    return new Promise((resolve, reject) => {
        const opener = document.activeElement;
        const titleId = uniqueId('dlg-title');
        const inputId = uniqueId('dlg');
        const input = h('input', {
            type: 'password', id: inputId, name: 'own-token', testid: 'own-token-input', required: true,
            autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `${inputId}-hint`,
        });
        const problem = h('p', { class: 'dialog-error', testid: 'own-token-error', role: 'alert', hidden: true });
        const cancel = h('button', { type: 'button', class: 'button', testid: 'cancel' }, 'Cancel');
        const confirm = h('button', { type: 'submit', class: danger ? 'button danger' : 'button primary', testid: 'confirm' }, confirmLabel);
        const form = h('form', { class: 'dialog-form' },
            h('h2', { id: titleId }, 'Confirm with your own token'),
            h('p', { class: 'dialog-description' }, `${action} needs your own token again, the one you signed in with`
                + `${person ? ` as ${person}` : ''}, so that a stolen session cannot make lasting access.`),
            h('div', { class: 'field' },
                h('label', { for: inputId }, 'Your token'),
                input,
                h('small', { id: `${inputId}-hint`, class: 'hint' }, 'Sent with this one request and kept nowhere.')),
            problem,
            h('div', { class: 'dialog-buttons' }, cancel, confirm));
        const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId, testid: 'own-token' }, form);
        let busy = false;
        // What the prompt ends with: `{value}` (null when cancelled) or `{error}`.
        let outcome = { value: null };
        const setBusy = (value) => {
            busy = value;
            confirm.disabled = value;
            cancel.disabled = value;
            input.disabled = value;
        };
        form.addEventListener('submit', async (event) => {
            event.preventDefault();
            const token = input.value.trim();
            input.value = '';
            if (token === '' || busy) return;
            setBusy(true);
            problem.hidden = true;
            try {
                outcome = { value: await send(token) };
                dialog.close();
            } catch (error) {
                if (!isReauthenticationRefusal(error)) {
                    outcome = { error };
                    dialog.close();
                    return;
                }
                problem.textContent = error.message;
                problem.hidden = false;
                setBusy(false);
                input.focus();
            }
        });
        cancel.addEventListener('click', () => dialog.close());
        // Escape while the request is out would close the prompt and lose its answer (a new key shown only once).
        dialog.addEventListener('cancel', (event) => {
            if (busy) event.preventDefault();
        });
        dialog.addEventListener('close', () => {
            input.value = '';
            dialog.remove();
            if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
            if (outcome.error) reject(outcome.error);
            else resolve(outcome.value);
        });
        document.body.appendChild(dialog);
        dialog.showModal();
        input.focus();
    });
}
