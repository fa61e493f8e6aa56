// What a person may do, from the role `GET /v1/admin/whoami` names and the least role of each endpoint in the
// server's table (endpoints.js). The dashboard offers only these actions; the server enforces the roles anyway (a 403
// shows its message). Pure.

/**
 * `{flagActions, cohortActions, rollback, promote, keys, tokens}`, each whether `role` may call the endpoint that
 * action sends, as `endpoints` (a createEndpoints) says. A role this dashboard does not know gets the least.
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
    };
}
