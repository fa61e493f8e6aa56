// What a person may do, from the role `GET /v1/admin/whoami` names. The dashboard offers only these actions; the
// server enforces the roles anyway (a 403 shows its message). Pure.

/**
 * `{flagActions, cohortActions, rollback, promote, keys, tokens}`: `viewer` may do none of them, `editor` the flag
 * and cohort ones (rollback and promote change flags), `admin` everything, SDK keys and tokens included. A role
 * this dashboard does not know gets the least: a viewer's.
 */
export function permissions(role) {
    const editor = role === 'editor' || role === 'admin';
    const admin = role === 'admin';
    return {
        flagActions: editor,
        cohortActions: editor,
        rollback: editor,
        promote: editor,
        keys: admin,
        tokens: admin,
    };
}
