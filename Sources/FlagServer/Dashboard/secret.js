// A secret (an SDK key, a personal token, a webhook's signing secret) shown once, right after it was made: a
// read-only field, a copy button and a warning. The dashboard keeps it nowhere; hiding the panel forgets it.

import { h } from '/ui/dom.js';

/** What the panel says of a token: the server keeps only its hash. */
const TOKEN_WARNING = 'This is the only time this token is shown: the server keeps only its hash. '
    + 'Copy it now into your secret manager; if it is lost, revoke it and make a new one.';

/**
 * The panel for `token`, named `title`; `onDone` removes it. `label` names the field and `warning` says why it is
 * shown once, for a secret that is not a token (a webhook's, which the server keeps sealed and never shows again).
 */
export function secretPanel(title, token, onDone, { label = 'Token', warning = TOKEN_WARNING } = {}) {
    const field = h('input', { type: 'text', id: 'secret-value', testid: 'secret-value', readOnly: true, value: token, spellcheck: 'false', autocomplete: 'off' });
    const status = h('span', { class: 'copy-status', 'aria-live': 'polite' });
    const copy = h('button', { type: 'button', class: 'button primary', testid: 'copy-secret' }, 'Copy');
    const done = h('button', { type: 'button', class: 'button', testid: 'secret-dismiss' }, 'I have stored it — hide');
    copy.addEventListener('click', async () => {
        try {
            // The Clipboard API needs a secure context (https or localhost).
            await navigator.clipboard.writeText(token);
            status.textContent = 'Copied.';
        } catch {
            field.focus();
            field.select();
            status.textContent = 'Copying was refused here: the text is selected, press Ctrl+C (⌘C).';
        }
    });
    done.addEventListener('click', () => {
        field.value = '';
        onDone();
    });
    const heading = h('h3', { tabindex: '-1' }, title);
    const panel = h('section', { class: 'secret', testid: 'secret-once', role: 'alert' },
        heading,
        h('p', { class: 'warning-text' }, warning),
        h('div', { class: 'field' }, h('label', { for: 'secret-value' }, label), field),
        h('div', { class: 'buttons' }, copy, done, status));
    queueMicrotask(() => heading.focus());
    return panel;
}
