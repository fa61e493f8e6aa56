// Modal forms in a native <dialog> (showModal): focus moves into the dialog when it opens and back to the button
// that opened it when it closes; Escape closes it. Every action dialog ends with the reason field (`reason-input`)
// and the confirm button (`confirm`).

import { h, uniqueId } from '/ui/dom.js';
import { localInputToISO } from '/ui/time.js';

function optionElements(options, selected) {
    return options.map((option) => {
        const item = typeof option === 'string' ? { value: option, label: option } : option;
        return h('option', { value: item.value, selected: item.value === selected }, item.label);
    });
}

function buildField(spec) {
    const id = uniqueId('dlg');
    const testid = spec.testid;
    if (spec.type === 'radio') {
        const inputs = spec.options.map((option) => {
            const inputId = uniqueId('dlg');
            const input = h('input', {
                type: 'radio', id: inputId, name: spec.name, value: option.value, checked: option.value === spec.value,
                testid: testid ? `${testid}-${option.value}` : undefined,
            });
            return { input, node: h('div', { class: 'choice' }, input, h('label', { for: inputId }, option.label)) };
        });
        const wrapper = h('fieldset', { class: 'field' }, h('legend', null, spec.label), inputs.map((item) => item.node));
        return {
            wrapper,
            inputs: inputs.map((item) => item.input),
            read: () => (inputs.find((item) => item.input.checked) || { input: { value: '' } }).input.value,
        };
    }
    if (spec.type === 'checkboxes') {
        const boxes = spec.options.map((option) => {
            const inputId = uniqueId('dlg');
            const input = h('input', {
                type: 'checkbox', id: inputId, name: spec.name, value: option, checked: (spec.value || []).includes(option),
                testid: testid ? `${testid}-${option}` : undefined,
            });
            return { input, node: h('div', { class: 'choice' }, input, h('label', { for: inputId }, option)) };
        });
        const wrapper = h('fieldset', { class: 'field' }, h('legend', null, spec.label), boxes.map((item) => item.node));
        return {
            wrapper,
            inputs: boxes.map((item) => item.input),
            read: () => boxes.filter((item) => item.input.checked).map((item) => item.input.value),
        };
    }
    let input;
    if (spec.type === 'select') {
        input = h('select', { id, name: spec.name, testid, required: spec.required }, optionElements(spec.options, spec.value));
    } else if (spec.type === 'textarea') {
        input = h('textarea', { id, name: spec.name, testid, required: spec.required, rows: spec.rows || 3, placeholder: spec.placeholder });
        input.value = spec.value ?? '';
    } else if (spec.type === 'checkbox') {
        input = h('input', { type: 'checkbox', id, name: spec.name, testid, checked: Boolean(spec.value), disabled: spec.locked });
        const wrapper = h('div', { class: 'field choice' }, input, h('label', { for: id }, spec.label));
        return { wrapper, inputs: [input], read: () => input.checked };
    } else {
        input = h('input', {
            type: spec.type || 'text', id, name: spec.name, testid, required: spec.required, placeholder: spec.placeholder,
            min: spec.min, max: spec.max, step: spec.step, autocomplete: 'off', spellcheck: 'false',
            pattern: spec.required && (spec.type || 'text') === 'text' ? '.*\\S.*' : undefined,
        });
        input.value = spec.value ?? '';
    }
    const children = [h('label', { for: id }, spec.label), input];
    if (spec.hint) {
        children.push(h('small', { id: `${id}-hint`, class: 'hint' }, spec.hint));
        input.setAttribute('aria-describedby', `${id}-hint`);
    }
    // A choice is read as it is: an enum flag's value may start or end with a space.
    const exact = spec.type === 'textarea' || spec.type === 'select';
    const read = () => (typeof input.value === 'string' && !exact ? input.value.trim() : input.value);
    return { wrapper: h('div', { class: 'field' }, children), inputs: [input], read };
}

/**
 * The fields that make a write of a set a change request instead (docs/reviews.md): a title, and when the server
 * applies it. `reviewOf(values)` reads them for `actions.run`.
 */
const REVIEW_FIELDS = [
    { name: 'propose', label: 'Propose it as a change request: another person approves it first', type: 'checkbox', testid: 'propose-input' },
    { name: 'proposeTitle', label: 'Title of the change request', required: true, testid: 'propose-title', when: (v) => v.propose },
    { name: 'proposeAt', label: 'Apply at (optional, your local time)', type: 'datetime-local', testid: 'propose-at', when: (v) => v.propose,
        hint: 'Left empty, someone applies it by hand once it is approved.' },
];

/** The review fields of a set that requires reviews: proposing is the only choice. */
const REQUIRED_REVIEW_FIELDS = REVIEW_FIELDS.map((field) => (field.name === 'propose'
    ? { ...field, value: true, locked: true, label: 'Propose it as a change request: this set requires another person\'s approval' }
    : field));

/** The review choice of a dialog's values: `{title, at?}` to propose, or null to write at once. */
export function reviewOf(values) {
    if (!values || !values.propose) return null;
    return { title: values.proposeTitle, at: localInputToISO(values.proposeAt) || undefined };
}

/**
 * Opens a modal form and resolves to its values (`{name: value}`, `reason` included) when confirmed, or null when
 * cancelled or closed with Escape. `fields`: `{name, label, type (text, number, select, radio, checkbox, checkboxes,
 * textarea, datetime-local), options, value, required, hint, placeholder, testid, when(values)}`; `checkboxes` offers
 * each of its `options` (texts) and reads as the list of those checked (`value`: those checked at first); a field
 * whose `when` answers false is hidden and not read. `reason`: `required`, `optional` (the default) or `none`. `review: true` adds
 * the fields that propose the write instead (`reviewOf`); `review: 'required'` makes proposing the only choice.
 * `check(values)` answers the form's problems, `[{field, message}]`: each shows under its field and the form stays
 * open until there are none. `submit(values)`, when given, sends the form while it stays open and resolves to
 * `{problems}` (the server's refusal, shown at the fields like `check`'s) or to what the dialog resolves to.
 */
export function formDialog({ title, description, fields = [], confirmLabel = 'Confirm', danger = false, reason = 'optional', review = false, check = null, submit = null }) {
    return new Promise((resolve) => {
        const opener = document.activeElement;
        // A live update may re-render the screen while the dialog is open: find the opener's replacement then.
        const openerTestid = opener && opener.getAttribute ? opener.getAttribute('data-testid') : null;
        const openerItem = opener && opener.dataset ? opener.dataset.item : undefined;
        const titleId = uniqueId('dlg-title');
        const specs = [...fields];
        if (reason !== 'none') {
            specs.push({
                name: 'reason', label: reason === 'required' ? 'Reason (required)' : 'Reason', type: 'text',
                required: reason === 'required', testid: 'reason-input',
                hint: 'Recorded in the audit log with your name.',
            });
        }
        // After the reason, so that an action's own fields keep the focus when it opens.
        if (review) specs.push(...(review === 'required' ? REQUIRED_REVIEW_FIELDS : REVIEW_FIELDS));
        const built = specs.map((spec) => ({ spec, ...buildField(spec) }));
        const values = () => {
            const result = {};
            for (const item of built) if (!item.wrapper.hidden) result[item.spec.name] = item.read();
            return result;
        };
        const refresh = () => {
            const current = {};
            for (const item of built) current[item.spec.name] = item.read();
            for (const item of built) {
                if (!item.spec.when) continue;
                const shown = Boolean(item.spec.when(current));
                item.wrapper.hidden = !shown;
                for (const input of item.inputs) input.disabled = !shown;
            }
        };
        const cancel = h('button', { type: 'button', class: 'button', testid: 'cancel' }, 'Cancel');
        const confirm = h('button', { type: 'submit', class: danger ? 'button danger' : 'button primary', testid: 'confirm' }, confirmLabel);
        const form = h('form', { class: 'dialog-form' },
            h('h2', { id: titleId }, title),
            description ? h('p', { class: 'dialog-description' }, description) : null,
            built.map((item) => item.wrapper),
            h('div', { class: 'dialog-buttons' }, cancel, confirm));
        const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId, testid: 'dialog' }, form);
        let result = null;
        form.addEventListener('input', refresh);
        form.addEventListener('change', refresh);
        /** Shows each of `problems` (`{field, message}`) under its field; the form stays open. */
        const showProblems = (problems) => {
            for (const old of form.querySelectorAll('.field-error')) old.remove();
            for (const item of built) for (const input of item.inputs) input.removeAttribute('aria-invalid');
            for (const problem of problems) {
                const item = built.find((candidate) => candidate.spec.name === problem.field) || built[0];
                const note = h('small', { class: 'field-error', role: 'alert', testid: 'field-error', data: { field: problem.field ?? '' } }, problem.message);
                item.wrapper.appendChild(note);
                item.inputs[0].setAttribute('aria-invalid', 'true');
            }
            const firstBad = built.find((item) => item.inputs[0].getAttribute('aria-invalid') === 'true');
            if (firstBad) firstBad.inputs[0].focus();
        };
        form.addEventListener('submit', async (event) => {
            event.preventDefault();
            if (confirm.disabled) return;
            const problems = check ? check(values()) : [];
            if (problems.length) {
                showProblems(problems);
                return;
            }
            if (!submit) {
                result = values();
                dialog.close();
                return;
            }
            confirm.disabled = true;
            form.setAttribute('aria-busy', 'true');
            const answer = await submit(values());
            confirm.disabled = false;
            form.removeAttribute('aria-busy');
            if (answer && Array.isArray(answer.problems) && answer.problems.length) {
                showProblems(answer.problems);
                return;
            }
            result = answer;
            dialog.close();
        });
        cancel.addEventListener('click', () => dialog.close());
        dialog.addEventListener('close', () => {
            dialog.remove();
            if (opener && opener.isConnected && typeof opener.focus === 'function') {
                opener.focus();
            } else if (openerTestid) {
                const replacement = [...document.querySelectorAll(`[data-testid="${CSS.escape(openerTestid)}"]`)]
                    .find((element) => element.dataset.item === openerItem);
                if (replacement) replacement.focus();
            }
            resolve(result);
        });
        refresh();
        document.body.appendChild(dialog);
        dialog.showModal();
        const first = built.find((item) => !item.wrapper.hidden);
        if (first) first.inputs[0].focus();
    });
}

/**
 * Opens a modal that shows `body` (nodes the caller may keep changing while it is open) above a row of buttons
 * (`{label, value, testid, danger, primary}`), and resolves to the value of the button pressed, or null when
 * closed with Escape. `focus` is the value of the button that takes focus (the first one by default). Answers
 * `{closed, close(value)}`: the promise, and a way to close it from outside.
 */
export function messageDialog({ title, body, buttons, focus, testid = 'dialog', data }) {
    const opener = document.activeElement;
    const titleId = uniqueId('dlg-title');
    const elements = buttons.map((spec) => h('button', {
        type: 'button', class: spec.danger ? 'button danger' : spec.primary ? 'button primary' : 'button', testid: spec.testid,
    }, spec.label));
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId, testid, data },
        h('div', { class: 'dialog-form' },
            h('h2', { id: titleId }, title),
            body,
            h('div', { class: 'dialog-buttons' }, elements)));
    let result = null;
    const closed = new Promise((resolve) => {
        dialog.addEventListener('close', () => {
            dialog.remove();
            if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
            resolve(result);
        });
    });
    const close = (value) => {
        if (!dialog.open) return;
        result = value;
        dialog.close();
    };
    elements.forEach((element, index) => element.addEventListener('click', () => close(buttons[index].value)));
    document.body.appendChild(dialog);
    dialog.showModal();
    const target = elements[Math.max(0, buttons.findIndex((spec) => spec.value === focus))];
    if (target) target.focus();
    return { closed, close, element: dialog };
}
