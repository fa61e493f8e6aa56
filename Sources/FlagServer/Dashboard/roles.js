// What a person may do, from the role `GET /v1/admin/whoami` names and the least role of each endpoint in the
// server's table (endpoints.js). The dashboard offers only these actions; the server enforces the roles anyway (a 403
// shows its message). Pure.

/**
 * `{flagActions, cohortActions, rollback, promote, keys, tokens, webhooks, changes, withdrawAny}`, each whether `role`
 * may call the endpoint that action sends, as `endpoints` (a createEndpoints) says: `webhooks` manages the server's
 * webhooks (an admin limited to sets, only those of its sets), `changes` decides on change requests,
 * `withdrawAny` withdraws another person's (an admin of the set, as making an SDK key needs). A role this dashboard does not know gets the least.
 */
export function permissions(role, endpoints) {
    const may = (name) => endpoints.allows(name, role);
    return {
        flagActions: may('kill'),
        cohortActions: may('putCohort'),
        rollback: may('rollback'),
        promote: may('promote'),
        keys: may('createKey'),
        tokens: may('createToken'),
        webhooks: may('listWebhooks'),
        changes: may('approveChange'),
        withdrawAny: may('createKey'),
    };
}

/**
 * The decisions `person` may take on a change request (docs/reviews.md), as `[endpoint, label, danger]`: none on one
 * that is done; approve one that is open and not theirs; apply, reject; withdraw their own, or any as an admin.
 */
export function decisionsFor(change, { perms, person }) {
    if (!['open', 'approved', 'scheduled'].includes(change.state) || !perms.changes) return [];
    const decisions = [];
    if (change.state === 'open' && change.author !== person) decisions.push(['approveChange', 'Approve', false]);
    decisions.push(['applyChange', 'Apply now', false]);
    decisions.push(['rejectChange', 'Reject', true]);
    if (change.author === person || perms.withdrawAny) decisions.push(['withdrawChange', 'Withdraw', true]);
    return decisions;
}
