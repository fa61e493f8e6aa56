// Evaluate a flag for a unit on the server, with the explanation flagctl's `eval --explain` prints: value, reason,
// variant and the steps that led there.

import { h, replaceChildren, uniqueId } from '/ui/dom.js';
import { valueText } from '/ui/format.js';
import { setHeader } from '/ui/layout.js';
import { localInputToISO } from '/ui/time.js';

function attributeRow(onRemove) {
    const nameId = uniqueId('attr-name');
    const valueId = uniqueId('attr-value');
    const name = h('input', { type: 'text', id: nameId, testid: 'eval-attr-name', autocomplete: 'off', spellcheck: 'false', placeholder: 'country' });
    const value = h('input', { type: 'text', id: valueId, testid: 'eval-attr-value', autocomplete: 'off', spellcheck: 'false', placeholder: 'DE' });
    const remove = h('button', { type: 'button', class: 'button small', testid: 'eval-attr-remove' }, 'Remove');
    const row = h('div', { class: 'attr-row' },
        h('div', { class: 'field' }, h('label', { for: nameId }, 'Attribute'), name),
        h('div', { class: 'field' }, h('label', { for: valueId }, 'Value'), value),
        remove);
    remove.addEventListener('click', () => onRemove(row));
    return { row, name, value };
}

function resultElement(result) {
    const steps = Array.isArray(result.steps) ? result.steps : [];
    const pairs = [
        ['Value', h('code', { class: 'value', testid: 'eval-value' }, valueText(result.value))],
        ['Reason', h('span', { testid: 'eval-reason' }, result.reason ?? '')],
        ['Variant', h('span', { testid: 'eval-variant' }, result.variant ?? '—')],
        ['Unit', result.unit ?? ''],
        ['Version', String(result.version ?? '')],
    ];
    if (result.at) pairs.push(['At', result.at]);
    if (result.errorCode) pairs.push(['Error', `${result.errorCode}${result.errorMessage ? `: ${result.errorMessage}` : ''}`]);
    return h('section', { class: 'card eval-result', testid: 'eval-result', 'aria-live': 'polite' },
        h('h3', null, 'Result for ', h('code', null, result.key ?? '')),
        h('dl', { class: 'meta' }, pairs.map(([term, detail]) => [h('dt', null, term), h('dd', null, detail)])),
        h('h4', null, 'Steps'),
        steps.length ? h('ol', { class: 'steps', testid: 'eval-steps' }, steps.map((step) => h('li', null, String(step))))
            : h('p', { class: 'muted' }, 'The server gave no steps.'));
}

/** The evaluate screen of `route.set`; `route.query.key` preselects a flag. */
export function render(ctx, route) {
    const setName = route.set;
    const keys = Object.keys(ctx.store.state.set?.flags || {}).sort();
    const chosen = route.query.key && keys.includes(route.query.key) ? route.query.key : keys[0];
    const key = h('select', { id: 'eval-key', testid: 'eval-key', required: true }, keys.map((item) => h('option', { value: item, selected: item === chosen }, item)));
    const unit = h('input', { type: 'text', id: 'eval-unit', testid: 'eval-unit', required: true, autocomplete: 'off', spellcheck: 'false', placeholder: 'user-42' });
    const at = h('input', { type: 'datetime-local', id: 'eval-at', testid: 'eval-at' });
    const attributes = h('div', { class: 'attrs' });
    const rows = [];
    const addRow = () => {
        const made = attributeRow((row) => {
            rows.splice(rows.findIndex((item) => item.row === row), 1);
            row.remove();
            add.focus();
        });
        rows.push(made);
        attributes.appendChild(made.row);
        return made;
    };
    const add = h('button', { type: 'button', class: 'button small', testid: 'eval-attr-add' }, 'Add attribute');
    add.addEventListener('click', () => addRow().name.focus());
    const submit = h('button', { type: 'submit', class: 'button primary', testid: 'eval-submit' }, 'Evaluate');
    const output = h('div', { class: 'eval-output' });
    const form = h('form', { class: 'eval-form' },
        h('div', { class: 'field' }, h('label', { for: 'eval-key' }, 'Flag'), key),
        h('div', { class: 'field' }, h('label', { for: 'eval-unit' }, 'Unit id'), unit),
        h('fieldset', { class: 'field' }, h('legend', null, 'Attributes'), attributes, add),
        h('div', { class: 'field' }, h('label', { for: 'eval-at' }, 'At (optional, your local time)'), at,
            h('small', { class: 'hint' }, 'Empty: now. A time lets you see a phased rollout later on.')),
        submit);
    addRow();

    form.addEventListener('submit', async (event) => {
        event.preventDefault();
        const attributesObject = {};
        for (const row of rows) {
            const name = row.name.value.trim();
            if (name !== '') attributesObject[name] = row.value.value;
        }
        const body = { key: key.value, unitID: unit.value.trim(), attributes: attributesObject };
        const time = localInputToISO(at.value);
        if (time) body.at = time;
        submit.disabled = true;
        try {
            const answer = await ctx.api.call('evaluate', { set: setName }, { body });
            ctx.notices.clearError();
            replaceChildren(output, resultElement(answer.json));
        } catch (error) {
            replaceChildren(output);
            if (error.status !== 401) ctx.notices.error(error);
        } finally {
            submit.disabled = false;
        }
    });

    const node = h('section', { class: 'screen' },
        setHeader(ctx, route),
        h('h2', { tabindex: '-1' }, 'Evaluate'),
        keys.length ? form : h('p', { class: 'empty' }, 'This set has no flags.'),
        output);
    return { node, title: `Evaluate · ${setName}` };
}
