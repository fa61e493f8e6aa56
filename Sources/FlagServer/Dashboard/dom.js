// Building DOM without markup: every text goes in through textContent or a text node, so a value from the API
// (a flag description that looks like an HTML tag with an event handler) shows as those characters.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) {
        for (const item of child) append(parent, item);
    } else if (child instanceof Node) {
        parent.appendChild(child);
    } else {
        parent.appendChild(document.createTextNode(String(child)));
    }
}

function apply(element, props) {
    for (const [name, value] of Object.entries(props || {})) {
        if (value === undefined || value === null || value === false) continue;
        if (name === 'class') element.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
        else if (name === 'text') element.textContent = String(value);
        else if (name === 'testid') element.setAttribute('data-testid', value);
        else if (name === 'on') for (const [event, handler] of Object.entries(value)) element.addEventListener(event, handler);
        else if (name === 'data') for (const [key, item] of Object.entries(value)) element.dataset[key] = String(item);
        else if (name === 'hidden' || name === 'disabled' || name === 'checked' || name === 'required' || name === 'selected'
            || name === 'readOnly' || name === 'multiple' || name === 'open') element[name] = Boolean(value);
        else if (name === 'value') element.value = String(value);
        else if (name === 'style') throw new Error('inline styles are refused by the Content-Security-Policy: use a class');
        else element.setAttribute(name, value === true ? '' : String(value));
    }
}

/**
 * An HTML element: `h('a', {href: '#/sets', class: 'link', testid: 'nav-flags', on: {click}}, 'Flags')`.
 * Props: `class`, `text`, `testid`, `on` (listeners), `data` (dataset), boolean properties, and attributes.
 * Children are nodes, texts (put in as text) or arrays of them; null and false are skipped.
 */
export function h(tag, props, ...children) {
    const element = document.createElement(tag);
    apply(element, props);
    append(element, children);
    return element;
}

/** An SVG element, attributes set one by one (sizes go in SVG attributes, never in a style attribute). */
export function svg(tag, attributes, ...children) {
    const element = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes || {})) {
        if (value === undefined || value === null) continue;
        if (name === 'testid') element.setAttribute('data-testid', value);
        else if (name === 'class') element.setAttribute('class', value);
        else if (name === 'text') element.textContent = String(value);
        else element.setAttribute(name, String(value));
    }
    append(element, children);
    return element;
}

/** Removes every child of `element`. */
export function clear(element) {
    while (element.firstChild) element.removeChild(element.firstChild);
    return element;
}

/** Replaces the children of `element` with `children`. */
export function replaceChildren(element, ...children) {
    clear(element);
    append(element, children);
    return element;
}

let counter = 0;

/** A document-unique id for pairing a `<label for>` with its input. */
export function uniqueId(prefix) {
    counter += 1;
    return `${prefix}-${counter}`;
}

/** A `<time>` showing a relative text, with the absolute UTC time as its datetime and tooltip. */
export function timeElement(iso, text, title) {
    return h('time', { datetime: typeof iso === 'string' ? iso : undefined, title }, text);
}

/** Remembers which test-hooked control has focus, to put focus back on its replacement after a re-render. */
export function focusKey() {
    const active = document.activeElement;
    if (!active || active === document.body) return null;
    const testid = active.getAttribute('data-testid');
    if (!testid) return null;
    const item = active.dataset.item;
    return { testid, item };
}

/** Focuses the element matching a `focusKey()` inside `root`; false when there is none. */
export function restoreFocus(root, key) {
    if (!key) return false;
    const candidates = root.querySelectorAll(`[data-testid="${CSS.escape(key.testid)}"]`);
    for (const candidate of candidates) {
        if ((candidate.dataset.item || undefined) === key.item) {
            candidate.focus();
            return true;
        }
    }
    return false;
}
