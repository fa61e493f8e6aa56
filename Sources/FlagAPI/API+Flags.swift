extension API {
    // MARK: - Flags

    /// `GET …/flags`.
    public static let listFlags = Endpoint<FlagListQuery, FlagList>(
        "listFlags", .get, "/v1/admin/sets/{set}/flags", .role(.viewer))
    /// `GET …/flags/{key}`.
    public static let getFlag = Endpoint<NoRequest, FlagAnswer>(
        "getFlag", .get, "/v1/admin/sets/{set}/flags/{key}", .role(.viewer))
    /// `PUT …/flags/{key}`: `201` when created.
    public static let putFlag = Endpoint<PutFlagRequest, MutationResult>(
        "putFlag", .put, "/v1/admin/sets/{set}/flags/{key}", .role(.editor))
    /// `DELETE …/flags/{key}`.
    public static let deleteFlag = Endpoint<ChangeRequest, MutationResult>(
        "deleteFlag", .delete, "/v1/admin/sets/{set}/flags/{key}", .role(.editor))
    /// `POST …/kill`.
    public static let kill = Endpoint<ChangeRequest, MutationResult>(
        "kill", .post, "/v1/admin/sets/{set}/flags/{key}/kill", .role(.editor))
    /// `POST …/restore`.
    public static let restore = Endpoint<ChangeRequest, MutationResult>(
        "restore", .post, "/v1/admin/sets/{set}/flags/{key}/restore", .role(.editor))
    /// `POST …/archive`.
    public static let archive = Endpoint<ChangeRequest, MutationResult>(
        "archive", .post, "/v1/admin/sets/{set}/flags/{key}/archive", .role(.editor))
    /// `POST …/unarchive`.
    public static let unarchive = Endpoint<ChangeRequest, MutationResult>(
        "unarchive", .post, "/v1/admin/sets/{set}/flags/{key}/unarchive", .role(.editor))
    /// `POST …/default`.
    public static let setDefault = Endpoint<DefaultRequest, MutationResult>(
        "setDefault", .post, "/v1/admin/sets/{set}/flags/{key}/default", .role(.editor))
    /// `PUT …/default`.
    public static let putDefault = Endpoint<DefaultRequest, MutationResult>(
        "putDefault", .put, "/v1/admin/sets/{set}/flags/{key}/default", .role(.editor))
    /// `POST …/expire`.
    public static let expire = Endpoint<ExpireRequest, MutationResult>(
        "expire", .post, "/v1/admin/sets/{set}/flags/{key}/expire", .role(.editor))
    /// `POST …/overrides`.
    public static let addOverride = Endpoint<OverrideRequest, MutationResult>(
        "addOverride", .post, "/v1/admin/sets/{set}/flags/{key}/overrides", .role(.editor))
    /// `DELETE …/overrides?unit=|cohort=`.
    public static let removeOverride = Endpoint<RemoveOverrideRequest, MutationResult>(
        "removeOverride", .delete, "/v1/admin/sets/{set}/flags/{key}/overrides", .role(.editor))
    /// `PUT …/rollout`.
    public static let putRollout = Endpoint<RolloutRequest, MutationResult>(
        "putRollout", .put, "/v1/admin/sets/{set}/flags/{key}/rollout", .role(.editor))
    /// `POST …/rollout`.
    public static let postRollout = Endpoint<RolloutRequest, MutationResult>(
        "postRollout", .post, "/v1/admin/sets/{set}/flags/{key}/rollout", .role(.editor))
    /// `DELETE …/rollout`.
    public static let removeRollout = Endpoint<ChangeRequest, MutationResult>(
        "removeRollout", .delete, "/v1/admin/sets/{set}/flags/{key}/rollout", .role(.editor))
    /// `POST …/rollout/pause`.
    public static let pauseRollout = Endpoint<ChangeRequest, MutationResult>(
        "pauseRollout", .post, "/v1/admin/sets/{set}/flags/{key}/rollout/pause", .role(.editor))
    /// `POST …/rollout/resume`.
    public static let resumeRollout = Endpoint<ChangeRequest, MutationResult>(
        "resumeRollout", .post, "/v1/admin/sets/{set}/flags/{key}/rollout/resume", .role(.editor))
    /// `POST …/rules`.
    public static let addRule = Endpoint<RuleRequest, MutationResult>(
        "addRule", .post, "/v1/admin/sets/{set}/flags/{key}/rules", .role(.editor))
    /// `DELETE …/rules/{name}`.
    public static let removeRule = Endpoint<ChangeRequest, MutationResult>(
        "removeRule", .delete, "/v1/admin/sets/{set}/flags/{key}/rules/{name}", .role(.editor))
    /// `PUT …/prerequisites/{name}`: the flag requires flag `name` to serve one of the values.
    public static let putPrerequisite = Endpoint<PrerequisiteRequest, MutationResult>(
        "putPrerequisite", .put, "/v1/admin/sets/{set}/flags/{key}/prerequisites/{name}", .role(.editor))
    /// `DELETE …/prerequisites/{name}`.
    public static let removePrerequisite = Endpoint<ChangeRequest, MutationResult>(
        "removePrerequisite", .delete, "/v1/admin/sets/{set}/flags/{key}/prerequisites/{name}", .role(.editor))
    /// `PUT …/values`: the only values a string flag serves, replacing the list.
    public static let putValues = Endpoint<ValuesRequest, MutationResult>(
        "putValues", .put, "/v1/admin/sets/{set}/flags/{key}/values", .role(.editor))
    /// `DELETE …/values`: the flag serves any string again.
    public static let removeValues = Endpoint<ChangeRequest, MutationResult>(
        "removeValues", .delete, "/v1/admin/sets/{set}/flags/{key}/values", .role(.editor))
    /// `POST …/promote`.
    public static let promote = Endpoint<PromoteRequest, MutationResult>(
        "promote", .post, "/v1/admin/sets/{set}/flags/{key}/promote", .role(.editor))

    // MARK: - Cohorts

    /// `GET …/cohorts`.
    public static let listCohorts = Endpoint<NoRequest, CohortList>(
        "listCohorts", .get, "/v1/admin/sets/{set}/cohorts", .role(.viewer))
    /// `GET …/cohorts/{name}`.
    public static let getCohort = Endpoint<NoRequest, CohortAnswer>(
        "getCohort", .get, "/v1/admin/sets/{set}/cohorts/{name}", .role(.viewer))
    /// `PUT …/cohorts/{name}`: `201` when created.
    public static let putCohort = Endpoint<PutCohortRequest, MutationResult>(
        "putCohort", .put, "/v1/admin/sets/{set}/cohorts/{name}", .role(.editor))
    /// `DELETE …/cohorts/{name}`.
    public static let deleteCohort = Endpoint<ChangeRequest, MutationResult>(
        "deleteCohort", .delete, "/v1/admin/sets/{set}/cohorts/{name}", .role(.editor))

    // MARK: - SDK keys

    /// `GET …/keys`.
    public static let listKeys = Endpoint<NoRequest, KeyList>(
        "listKeys", .get, "/v1/admin/sets/{set}/keys", .role(.admin))
    /// `POST …/keys`: `201`, the key in this answer only.
    public static let createKey = Endpoint<CreateKeyRequest, CreatedKey>(
        "createKey", .post, "/v1/admin/sets/{set}/keys", .role(.admin), confirmsPerson: true)
    /// `DELETE …/keys/{name}`.
    public static let revokeKey = Endpoint<ChangeRequest, RevokedKey>(
        "revokeKey", .delete, "/v1/admin/sets/{set}/keys/{name}", .role(.admin), confirmsPerson: true)

    /// The flag, cohort and key endpoints, in the order of the server's route table.
    static let flagEndpoints: [EndpointInfo] = [
        listFlags.info, getFlag.info, putFlag.info, deleteFlag.info, kill.info, restore.info, archive.info,
        unarchive.info, setDefault.info, putDefault.info, expire.info, addOverride.info, removeOverride.info,
        putRollout.info, postRollout.info, removeRollout.info, pauseRollout.info, resumeRollout.info, addRule.info,
        removeRule.info, putPrerequisite.info, removePrerequisite.info, putValues.info,
        removeValues.info, promote.info,
        listCohorts.info, getCohort.info, putCohort.info, deleteCohort.info,
        listKeys.info, createKey.info, revokeKey.info,
    ]
}

extension RawJSON: APIRequest {}
