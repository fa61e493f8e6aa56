/// Every endpoint of the server, by the name the dashboard's table uses (`GET /ui/endpoints.json`).
///
/// The server's `Route` names one of these for each of its routes; a route's template and least role are written
/// here only. The routes of clients and of the service are here too, with their own formats as `OpaqueAnswer` or
/// `RawJSON`, so that one table holds every path.
public enum API {
    // MARK: - Service

    /// `GET /healthz`: no token.
    public static let health = Endpoint<NoRequest, Health>("health", .get, "/healthz", .anyone)
    /// `GET /metrics`: Prometheus text.
    public static let metrics = Endpoint<NoRequest, OpaqueAnswer>("metrics", .get, "/metrics", .unlimited(.admin))
    /// `GET /ui`: the dashboard's page.
    public static let dashboard = Endpoint<NoRequest, OpaqueAnswer>("dashboard", .get, "/ui", .anyone)
    /// `GET /ui/{name}`: the dashboard's files, and `endpoints.json`.
    public static let dashboardFile = Endpoint<NoRequest, OpaqueAnswer>("dashboardFile", .get, "/ui/{name}", .anyone)

    // MARK: - Clients (SDK key or admin token)

    /// `GET /v1/sets/{set}`: the current document, with `ETag` and, when signed, `Flagstaff-Signature`.
    public static let document = Endpoint<NoRequest, OpaqueAnswer>("document", .get, "/v1/sets/{set}", .setReader)
    /// `GET /v1/sets/{set}/stream`: Server-Sent Events.
    public static let stream = Endpoint<NoRequest, OpaqueAnswer>("stream", .get, "/v1/sets/{set}/stream", .setReader)
    /// `GET /v1/sets/{set}/versions/{n}`: an old version's document, immutable.
    public static let oldVersion = Endpoint<NoRequest, OpaqueAnswer>(
        "oldVersion", .get, "/v1/sets/{set}/versions/{n}", .setReader)
    /// `POST /ofrep/v1/evaluate/flags`: OpenFeature remote evaluation of every flag.
    public static let ofrepBulk = Endpoint<RawJSON, OpaqueAnswer>(
        "ofrepBulk", .post, "/ofrep/v1/evaluate/flags", .anyToken)
    /// `POST /ofrep/v1/evaluate/flags/{key}`: OpenFeature remote evaluation of one flag.
    public static let ofrepFlag = Endpoint<RawJSON, OpaqueAnswer>(
        "ofrepFlag", .post, "/ofrep/v1/evaluate/flags/{key}", .anyToken)
    /// `POST /v1/sets/{set}/telemetry`: a client's report (docs/telemetry.md), `204`.
    public static let telemetry = Endpoint<RawJSON, NoAnswer>(
        "telemetry", .post, "/v1/sets/{set}/telemetry", .setReader)
    /// `GET /v1/sets/{set}/signing-keys`: the public signing keys.
    public static let signingKeys = Endpoint<NoRequest, SigningKeyList>(
        "signingKeys", .get, "/v1/sets/{set}/signing-keys", .setReader)

    // MARK: - People and roles

    /// `GET /v1/admin/whoami`.
    public static let whoami = Endpoint<NoRequest, Whoami>("whoami", .get, "/v1/admin/whoami", .role(.viewer))
    /// `POST /v1/admin/sessions`: a dashboard session, `201`.
    public static let startSession = Endpoint<ChangeRequest, SessionAnswer>(
        "startSession", .post, "/v1/admin/sessions", .role(.viewer))
    /// `DELETE /v1/admin/sessions/current`: sign the calling session out.
    public static let endSession = Endpoint<ChangeRequest, SessionEnded>(
        "endSession", .delete, "/v1/admin/sessions/current", .role(.viewer))
    /// `GET /v1/admin/tokens`.
    public static let listTokens = Endpoint<NoRequest, TokenList>(
        "listTokens", .get, "/v1/admin/tokens", .unlimited(.admin))
    /// `POST /v1/admin/tokens`: `201`, the token in this answer only.
    public static let createToken = Endpoint<CreateTokenRequest, CreatedToken>(
        "createToken", .post, "/v1/admin/tokens", .unlimited(.admin), confirmsPerson: true)
    /// `DELETE /v1/admin/tokens/{name}`.
    public static let revokeToken = Endpoint<ChangeRequest, RevokedToken>(
        "revokeToken", .delete, "/v1/admin/tokens/{name}", .unlimited(.admin), confirmsPerson: true)
    /// `GET /v1/admin/audit`: every set's audit log.
    public static let audit = Endpoint<AuditQuery, AuditList>("audit", .get, "/v1/admin/audit", .role(.viewer))

    // MARK: - Sets

    /// `GET /v1/admin/sets`.
    public static let listSets = Endpoint<NoRequest, SetList>("listSets", .get, "/v1/admin/sets", .role(.viewer))
    /// `POST /v1/admin/sets`: `201`.
    public static let createSet = Endpoint<CreateSetRequest, MutationResult>(
        "createSet", .post, "/v1/admin/sets", .unlimited(.admin))
    /// `GET /v1/admin/sets/{set}`: the current document.
    public static let exportSet = Endpoint<NoRequest, OpaqueAnswer>(
        "exportSet", .get, "/v1/admin/sets/{set}", .role(.viewer))
    /// `PUT /v1/admin/sets/{set}`: a dry run is a viewer's; writing asks for an editor.
    public static let importSet = Endpoint<ImportRequest, ImportAnswer>(
        "importSet", .put, "/v1/admin/sets/{set}", .role(.viewer))
    /// `GET …/history`.
    public static let history = Endpoint<HistoryQuery, History>(
        "history", .get, "/v1/admin/sets/{set}/history", .role(.viewer))
    /// `GET …/diff`.
    public static let diff = Endpoint<DiffQuery, DiffAnswer>("diff", .get, "/v1/admin/sets/{set}/diff", .role(.viewer))
    /// `GET …/audit`: one set's audit log.
    public static let setAudit = Endpoint<AuditQuery, AuditList>(
        "setAudit", .get, "/v1/admin/sets/{set}/audit", .role(.viewer))
    /// `POST …/rollback`.
    public static let rollback = Endpoint<RollbackRequest, MutationResult>(
        "rollback", .post, "/v1/admin/sets/{set}/rollback", .role(.editor))
    /// `POST …/evaluate`: one flag for a context, with every step.
    public static let evaluate = Endpoint<EvaluateRequest, EvaluationAnswer>(
        "evaluate", .post, "/v1/admin/sets/{set}/evaluate", .role(.viewer))
    /// `GET …/clients`.
    public static let clients = Endpoint<ClientsQuery, ClientsAnswer>(
        "clients", .get, "/v1/admin/sets/{set}/clients", .role(.viewer))
    /// `GET …/usage`.
    public static let usage = Endpoint<UsageQuery, UsageAnswer>(
        "usage", .get, "/v1/admin/sets/{set}/usage", .role(.viewer))
    /// `GET …/versions/{n}/propagation`.
    public static let propagation = Endpoint<NoRequest, PropagationAnswer>(
        "propagation", .get, "/v1/admin/sets/{set}/versions/{n}/propagation", .role(.viewer))
    /// `GET …/settings`.
    public static let getSettings = Endpoint<NoRequest, SettingsAnswer>(
        "getSettings", .get, "/v1/admin/sets/{set}/settings", .role(.viewer))
    /// `PUT …/settings`.
    public static let putSettings = Endpoint<SettingsRequest, SettingsAnswer>(
        "putSettings", .put, "/v1/admin/sets/{set}/settings", .role(.admin))
    /// `POST …/signing-keys`: a new key, published (or active for a set that had none), `201`.
    public static let rotateSigningKey = Endpoint<ChangeRequest, SigningKeyInfo>(
        "rotateSigningKey", .post, "/v1/admin/sets/{set}/signing-keys", .role(.admin))
    /// `POST …/signing-keys/{name}/activate`.
    public static let activateSigningKey = Endpoint<ChangeRequest, SigningKeyList>(
        "activateSigningKey", .post, "/v1/admin/sets/{set}/signing-keys/{name}/activate", .role(.admin))
    /// `POST …/signing-keys/{name}/retire`.
    public static let retireSigningKey = Endpoint<ChangeRequest, SigningKeyList>(
        "retireSigningKey", .post, "/v1/admin/sets/{set}/signing-keys/{name}/retire", .role(.admin))

    // MARK: - Change requests

    /// `GET …/changes?state=`: the set's change requests, newest first.
    public static let listChanges = Endpoint<ChangeListQuery, ChangeList>(
        "listChanges", .get, "/v1/admin/sets/{set}/changes", .role(.viewer))
    /// `GET …/changes/{n}`: one change request, with its diff against the current version.
    public static let getChange = Endpoint<NoRequest, ChangeAnswer>(
        "getChange", .get, "/v1/admin/sets/{set}/changes/{n}", .role(.viewer))
    /// `POST …/changes/{n}/approve`: by an editor who is not its author.
    public static let approveChange = Endpoint<ChangeRequest, ChangeInfo>(
        "approveChange", .post, "/v1/admin/sets/{set}/changes/{n}/approve", .role(.editor))
    /// `POST …/changes/{n}/reject`.
    public static let rejectChange = Endpoint<ChangeRequest, ChangeInfo>(
        "rejectChange", .post, "/v1/admin/sets/{set}/changes/{n}/reject", .role(.editor))
    /// `POST …/changes/{n}/schedule`: a new time at which the server applies it.
    public static let scheduleChange = Endpoint<ScheduleRequest, ChangeInfo>(
        "scheduleChange", .post, "/v1/admin/sets/{set}/changes/{n}/schedule", .role(.editor))
    /// `POST …/changes/{n}/apply`: writes it as one new version.
    public static let applyChange = Endpoint<ChangeRequest, ChangeInfo>(
        "applyChange", .post, "/v1/admin/sets/{set}/changes/{n}/apply", .role(.editor))
    /// `DELETE …/changes/{n}`: withdrawn by its author or an admin.
    public static let withdrawChange = Endpoint<ChangeRequest, ChangeInfo>(
        "withdrawChange", .delete, "/v1/admin/sets/{set}/changes/{n}", .role(.editor))

    // MARK: - Webhooks

    /// `GET /v1/admin/webhooks`: the hooks the caller may manage.
    public static let listWebhooks = Endpoint<NoRequest, WebhookList>(
        "listWebhooks", .get, "/v1/admin/webhooks", .role(.admin))
    /// `POST /v1/admin/webhooks`: `201` with the signing secret, shown once.
    public static let createWebhook = Endpoint<CreateWebhookRequest, WebhookSecretAnswer>(
        "createWebhook", .post, "/v1/admin/webhooks", .role(.admin))
    /// `GET /v1/admin/webhooks/{name}`: one hook with its recent deliveries.
    public static let getWebhook = Endpoint<NoRequest, WebhookAnswer>(
        "getWebhook", .get, "/v1/admin/webhooks/{name}", .role(.admin))
    /// `DELETE /v1/admin/webhooks/{name}`.
    public static let deleteWebhook = Endpoint<ChangeRequest, DeletedWebhook>(
        "deleteWebhook", .delete, "/v1/admin/webhooks/{name}", .role(.admin))
    /// `POST /v1/admin/webhooks/{name}/test`: queues a test event for the hook.
    public static let testWebhook = Endpoint<ChangeRequest, WebhookTestAnswer>(
        "testWebhook", .post, "/v1/admin/webhooks/{name}/test", .role(.admin))
    /// `POST /v1/admin/webhooks/{name}/rotate-secret`: a new secret; the old one signs too for 24 hours.
    public static let rotateWebhookSecret = Endpoint<ChangeRequest, WebhookSecretAnswer>(
        "rotateWebhookSecret", .post, "/v1/admin/webhooks/{name}/rotate-secret", .role(.admin))

    /// Every endpoint, in the order of the server's route table.
    public static let all: [EndpointInfo] =
        [
            health.info, metrics.info, dashboard.info, dashboardFile.info,
            document.info, stream.info, oldVersion.info, ofrepBulk.info, ofrepFlag.info, telemetry.info,
            signingKeys.info,
            whoami.info, startSession.info, endSession.info, listTokens.info, createToken.info, revokeToken.info,
            audit.info,
            listSets.info, createSet.info, exportSet.info, importSet.info, history.info, diff.info, setAudit.info,
            rollback.info, evaluate.info, clients.info, usage.info, propagation.info, getSettings.info,
            putSettings.info, rotateSigningKey.info, activateSigningKey.info, retireSigningKey.info,
            listChanges.info, getChange.info, approveChange.info, rejectChange.info, scheduleChange.info,
            applyChange.info, withdrawChange.info,
        ] + flagEndpoints + [
            listWebhooks.info, createWebhook.info, getWebhook.info, deleteWebhook.info, testWebhook.info,
            rotateWebhookSecret.info,
        ]

    /// The names of the endpoints that write a version of a set: `?propose=TITLE` holds such a write back as a change
    /// request, and `?withoutReview=REASON` lets an admin write it at once on a set that requires reviews
    /// (docs/reviews.md). Every other endpoint refuses both.
    public static let setWrites: Set<String> = [
        importSet.info.name, rollback.info.name, putFlag.info.name, deleteFlag.info.name, kill.info.name,
        restore.info.name, archive.info.name,
        unarchive.info.name, setDefault.info.name, putDefault.info.name, expire.info.name, addOverride.info.name,
        removeOverride.info.name,
        putRollout.info.name, postRollout.info.name, removeRollout.info.name, pauseRollout.info.name,
        resumeRollout.info.name, addRule.info.name,
        removeRule.info.name, putPrerequisite.info.name, removePrerequisite.info.name, putValues.info.name,
        removeValues.info.name, promote.info.name,
        putCohort.info.name, deleteCohort.info.name,
    ]

    /// The endpoints of the admin API proper: those a token of the admin API with a role may call.
    public static var admin: [EndpointInfo] { all.filter { $0.access.role != nil } }
}
