// The page's messages: the one error banner (`error-banner`), the plain-HTTP warning, and short-lived toasts
// (`toast`) for changes, the dashboard's own and other people's.

import { h, replaceChildren } from '/ui/dom.js';
import { errorLines } from '/ui/errors.js';

const TOAST_MS = 8000;
/** More toasts than this push the oldest out, so they never cover the page. */
const MAX_TOASTS = 3;

/**
 * Binds to the shell's elements. `error(e)` takes an ApiError (422 problems listed at their JSON paths) or a text;
 * a message stays until `clearError()`, which the router calls on the next navigation unless the error asked to
 * survive it (`{keep: true}`: the 401 that sends the page to sign-in).
 */
export function createNotices({ banner, toasts, warning }) {
    let keepOnce = false;

    function error(problem, { keep = false } = {}) {
        const info = typeof problem === 'string'
            ? { message: problem, problems: [] }
            : errorLines({ message: problem.message || String(problem), problems: problem.problems || [] });
        const children = [h('p', { class: 'banner-message' }, info.message)];
        if (info.problems.length) {
            children.push(h('ul', { class: 'problems', testid: 'error-problems' },
                info.problems.map((line) => h('li', null, line))));
        }
        replaceChildren(banner, ...children);
        banner.hidden = false;
        keepOnce = keep;
    }

    function clearError() {
        replaceChildren(banner);
        banner.hidden = true;
        keepOnce = false;
    }

    return {
        error,
        clearError,
        /** Called by the router on each navigation. */
        navigated() {
            if (keepOnce) keepOnce = false;
            else clearError();
        },
        toast(text) {
            const item = h('div', { class: 'toast', testid: 'toast' }, text);
            toasts.appendChild(item);
            while (toasts.children.length > MAX_TOASTS) toasts.firstElementChild.remove();
            setTimeout(() => item.remove(), TOAST_MS);
        },
        /** Shows or hides the plain-HTTP warning. */
        warnPlainHTTP(show) {
            warning.hidden = !show;
        },
    };
}
