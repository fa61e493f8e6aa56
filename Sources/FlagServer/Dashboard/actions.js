// Writes to the open set: one path for every action, so that each sends If-Match with the version the page shows
// (kill and restore excepted), updates the store from the answer, and shows a 409 as the conflict panel with what
// changed, a 422 `incompatible_clients` as a dialog that lets an editor write it anyway, other errors in the banner.

import { messageDialog } from '/ui/dialog.js';
import { diffListElement } from '/ui/diffview.js';
import { h, replaceChildren } from '/ui/dom.js';
import { incompatibilityLines } from '/ui/errors.js';
import { applyMutation } from '/ui/patch.js';

/**
 * The refusal of a change that active clients cannot evaluate: the server's message, what and who, and for a
 * person who may write flags a button to write it anyway. Resolves to true for "write anyway".
 */
async function confirmIncompatible(error, canForce) {
    const found = incompatibilityLines(error.incompatibility);
    const list = (testid, items) => (items.length ? h('ul', { testid }, items.map((item) => h('li', null, item))) : null);
    const buttons = [{ label: canForce ? 'Cancel' : 'Close', value: false, testid: 'cancel' }];
    if (canForce) buttons.push({ label: 'Write anyway', value: true, testid: 'write-anyway', danger: true });
    const view = messageDialog({
        title: 'Clients cannot evaluate this change',
        testid: 'incompatible',
        body: [
            h('p', { testid: 'incompatible-message' }, error.message),
            // The message names five SDK versions at most; these lists have them all.
            found.constructs.length ? h('p', null, `${found.share} cannot evaluate:`) : null,
            list('incompatible-constructs', found.constructs),
            found.sdks.length ? h('p', null, 'Their SDK versions (instances):') : null,
            list('incompatible-sdks', found.sdks),
            found.apps.length ? h('p', null, 'Their app versions (instances):') : null,
            list('incompatible-apps', found.apps),
            h('p', { class: 'muted' }, canForce
                ? 'Nothing was written. Written anyway, those instances serve the flag\'s compiled-in default, and the '
                    + 'audit log records that it was written anyway.'
                : 'Nothing was written.'),
        ],
        buttons,
    });
    return (await view.closed) === true;
}

/**
 * `region` is the shell's element for the conflict panel (`conflict`); `canForce()` says whether the signed-in
 * person may write a change that some clients cannot evaluate (an editor).
 */
export function createActions({ api, store, live, notices, region, canForce = () => false }) {
    function closeConflict() {
        replaceChildren(region);
    }

    async function showConflict(setName, shown, current) {
        const heading = h('h2', { tabindex: '-1' }, 'This set changed since the page loaded');
        const changes = h('div', { class: 'conflict-changes' }, h('p', { class: 'loading' }, 'Loading what changed…'));
        const reload = h('button', { type: 'button', class: 'button primary', testid: 'conflict-reload' }, 'Reload the set');
        const dismiss = h('button', { type: 'button', class: 'button', testid: 'conflict-dismiss' }, 'Dismiss');
        const panel = h('section', { class: 'conflict', testid: 'conflict', role: 'alert', data: { from: shown, to: current ?? '' } },
            heading,
            h('p', null, `You saw version ${shown}; ${setName} is at version ${current ?? 'a newer version'} now. `
                + 'Nothing was changed. Review what changed, reload, then try again.'),
            changes,
            h('div', { class: 'buttons' }, reload, dismiss));
        reload.addEventListener('click', async () => {
            reload.disabled = true;
            try {
                await live.reload();
                closeConflict();
                notices.toast(`Reloaded ${setName} at version ${store.state.set?.version}.`);
            } catch (error) {
                reload.disabled = false;
                notices.error(error);
            }
        });
        dismiss.addEventListener('click', closeConflict);
        replaceChildren(region, panel);
        heading.focus();
        if (current === null || current === undefined) {
            replaceChildren(changes, h('p', null, 'The server did not say which version is current.'));
            return;
        }
        try {
            const answer = await api.get('diff', { set: setName }, { from: shown, to: current });
            replaceChildren(changes, diffListElement(answer.json, {
                leftLabel: `version ${shown} (yours)`, rightLabel: `version ${current} (now)`, testid: 'conflict-diff',
            }));
        } catch (error) {
            replaceChildren(changes, h('p', null, `Could not load what changed: ${error.message}`));
        }
    }

    /**
     * Sends one write to the open set and answers its mutation response, or null when it failed (the failure is
     * shown). `ifMatch: false` only for kill and restore. `refetch: true` when the answer cannot update the store
     * alone (a promote that copies cohorts). `done(answer)` gives the toast's text. `review` (dialog.js's
     * `reviewOf`) proposes the write instead: nothing changes until the change request is applied.
     * `problemsAt(error)` places a refusal at a form's fields (authoring.js's `fieldProblems`): when it answers any,
     * run answers `{problems}` for the form to show, and the banner stays clear.
     */
    async function run({ endpoint, params, body, query, ifMatch = true, refetch = false, done, review = null, createOnly = false, problemsAt = null }) {
        const set = store.state.set;
        if (!set) return null;
        // Written anyway after a refusal, the change still goes in at the version the person saw.
        const shown = set.version;
        const proposal = review ? { propose: review.title, at: review.at } : {};
        const send = async (allowIncompatible) => {
            const sent = { ...query, ...proposal, ...(allowIncompatible ? { allowIncompatible: 'true' } : {}) };
            try {
                return await api.call(endpoint, params, { body, query: sent, ifMatch: ifMatch ? shown : undefined, createOnly });
            } catch (error) {
                if (allowIncompatible || error.status !== 422 || error.code !== 'incompatible_clients') throw error;
                notices.clearError();
                if (!(await confirmIncompatible(error, canForce()))) return null;
                return send(true);
            }
        };
        try {
            const answer = await send(false);
            if (!answer) return null;
            notices.clearError();
            closeConflict();
            if (answer.json && answer.json.changeRequest !== undefined) {
                const when = review && review.at ? `, to apply at ${review.at}` : '';
                notices.toast(`Proposed change request ${answer.json.changeRequest}${when}: it waits for another person's approval on the Changes screen.`);
                return answer.json;
            }
            const applied = !refetch && store.state.set === set ? applyMutation(set, answer.json) : { status: 'refetch' };
            if (applied.status === 'applied') store.setChanged(applied);
            else if (applied.status === 'refetch') await live.reload();
            if (answer.json && answer.json.changed === false) notices.toast('Nothing changed: the flag set already was that way.');
            else if (done) notices.toast(done(answer.json));
            // The set's compatibility setting is `warn`: written, with what the gate would have refused.
            for (const warning of (answer.json && Array.isArray(answer.json.warnings) ? answer.json.warnings : [])) {
                if (typeof warning === 'string') notices.toast(`Warning: ${warning}`);
            }
            return answer.json;
        } catch (error) {
            if (error.name === 'AbortError') return null;
            const problems = problemsAt ? problemsAt(error) : [];
            if (problems.length) {
                notices.clearError();
                return { problems };
            }
            if (error.status === 409 && error.code === 'conflict') {
                notices.clearError();
                await showConflict(set.name, shown, error.currentVersion);
            } else if (error.status !== 401) {
                notices.error(error);
            }
            return null;
        }
    }

    return { run, closeConflict, showConflict };
}
