import FlagAPI
import FlagCore
import FlagHTTP
import Foundation

/// `/v1/admin/sets/{set}/flags/...`: read, replace and delete flags, and the one-purpose actions on a flag.
extension FlagServerApp {
    /// `POST …/kill` and `…/restore`.
    func setKilled(_ call: Call, _ request: ChangeRequest, _ killed: Bool) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: killed ? "flag.kill" : "flag.restore") { flag in flag.killed = killed }
    }

    /// `POST …/archive` and `…/unarchive`.
    func setArchived(_ call: Call, _ request: ChangeRequest, _ archived: Bool) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: archived ? "flag.archive" : "flag.unarchive") { flag in
            if archived { try Self.refuseIfRequired(flag.key, in: service.state(call.set)) }
            flag.archived = archived
        }
    }

    /// `POST` or `PUT …/default`: `{"value"}`.
    func setDefault(_ call: Call, _ request: DefaultRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.default") { flag in
            flag.defaultValue = try Self.requireValue(request.value, request.valueText, "value", of: flag.type)
        }
    }

    /// `POST …/expire`: `{"keep", "at"?}`, at the current second when `at` is not given.
    func expire(_ call: Call, _ request: ExpireRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.expire") { [clock] flag in
            flag.expiredValue = try Self.requireValue(request.keep, request.keepText, "keep", of: flag.type)
            flag.expiresAt =
                request.at ?? Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
        }
    }

    /// `POST …/overrides`: `{"unit"|"cohort", "value", "until"|"for"?}`, replacing an override of the same target.
    func addOverride(_ call: Call, _ request: OverrideRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.override.add") { [clock] flag in
            let target = try Self.overrideTarget(unit: request.unit, cohort: request.cohort)
            let value = try Self.requireValue(request.value, request.valueText, "value", of: flag.type)
            var until = request.until
            if until == nil, let seconds = try Self.duration(request.for, "for") {
                until = Date(
                    timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(seconds)).rounded(.down))
            }
            flag.overrides.removeAll { $0.target == target }
            flag.overrides.append(Override(target: target, value: value, until: until))
        }
    }

    /// `DELETE …/overrides?unit=…|cohort=…`.
    func removeOverride(_ call: Call, _ request: RemoveOverrideRequest) throws -> Reply<MutationResult> {
        let key = call.key
        return try mutateFlag(call, request, action: "flag.override.remove") { flag in
            let target = try Self.overrideTarget(unit: request.unit, cohort: request.cohort)
            guard flag.overrides.contains(where: { $0.target == target }) else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no such override", path: "flags.\(key).overrides", subject: .override)
            }
            flag.overrides.removeAll { $0.target == target }
        }
    }

    /// `PUT` or `POST …/rollout`.
    func setRollout(_ call: Call, _ request: RolloutRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.rollout.set") { [clock] flag in
            flag.rollout = try Self.rollout(from: request, type: flag.type, now: clock.now())
        }
    }

    /// `DELETE …/rollout`.
    func removeRollout(_ call: Call, _ request: ChangeRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.rollout.remove") { flag in flag.rollout = nil }
    }

    /// `POST …/rollout/pause` and `…/rollout/resume`, at the current second.
    func pauseRollout(_ call: Call, _ request: ChangeRequest, _ pause: Bool) throws -> Reply<MutationResult> {
        let key = call.key
        return try mutateFlag(call, request, action: "flag.rollout.\(pause ? "pause" : "resume")") { [clock] flag in
            guard let rollout = flag.rollout else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no rollout", path: "flags.\(key).rollout", subject: .rollout)
            }
            let now = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
            flag.rollout = pause ? rollout.paused(at: now) : rollout.resumed(at: now)
        }
    }

    /// `POST …/rules`: `{"rule"}`, appended after the flag's rules.
    func addRule(_ call: Call, _ request: RuleRequest) throws -> Reply<MutationResult> {
        let rule = try Self.parse(request.rule, "rule")
        return try mutateFlag(call, request, action: "flag.rule.add") { flag in
            flag = try Self.flag(flag, appendingRule: rule)
        }
    }

    /// `PUT …/prerequisites/{name}`: `{"values"|"valuesText"}`, replacing what the flag listed for `name`.
    func putPrerequisite(_ call: Call, _ request: PrerequisiteRequest) throws -> Reply<MutationResult> {
        let required = call.name
        // Text is read as the required flag's type; a flag the set lacks is the set's checks' to name.
        let type = service.state(call.set)?.compiled.flag(required)?.type ?? .json
        let values: [JSONValue]
        switch (request.values, request.valuesText) {
        case (let raw?, nil):
            guard case .array(let list) = try Self.parse(raw, "values") else {
                throw ServiceError.badRequest("\"values\" must be a JSON array, e.g. [true]", path: "values")
            }
            values = list
        case (nil, let texts?):
            var read: [JSONValue] = []
            for (index, text) in texts.enumerated() {
                do {
                    read.append(try type.value(fromText: text))
                } catch {
                    throw ServiceError.badRequest(error.message, path: "valuesText[\(index)]")
                }
            }
            values = read
        case (nil, nil):
            throw ServiceError.badRequest("\"values\" (or \"valuesText\") is required", path: "values")
        case (.some, .some):
            throw ServiceError.badRequest("give \"values\" or \"valuesText\", not both", path: "valuesText")
        }
        return try mutateFlag(call, request, action: "flag.prerequisite.set") { flag in
            let prerequisite = Prerequisite(flag: required, values: values)
            if let index = flag.prerequisites.firstIndex(where: { $0.flag == required }) {
                flag.prerequisites[index] = prerequisite
            } else {
                flag.prerequisites.append(prerequisite)
            }
        }
    }

    /// `PUT …/values`: `{"values"}`, the only values the string flag serves; the set's checks refuse a list that
    /// leaves out a value the flag serves.
    func putValues(_ call: Call, _ request: ValuesRequest) throws -> Reply<MutationResult> {
        try mutateFlag(call, request, action: "flag.values.set") { flag in flag.values = request.values }
    }

    /// `DELETE …/prerequisites/{name}`.
    func removePrerequisite(_ call: Call, _ request: ChangeRequest) throws -> Reply<MutationResult> {
        let (key, required) = (call.key, call.name)
        return try mutateFlag(call, request, action: "flag.prerequisite.remove") { flag in
            guard flag.prerequisites.contains(where: { $0.flag == required }) else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" does not require \"\(required)\"", path: "flags.\(key).prerequisites",
                    subject: .flag)
            }
            flag.prerequisites.removeAll { $0.flag == required }
        }
    }

    /// `DELETE …/rules/{name}`.
    func removeRule(_ call: Call, _ request: ChangeRequest) throws -> Reply<MutationResult> {
        let (key, name) = (call.key, call.name)
        return try mutateFlag(call, request, action: "flag.rule.remove") { flag in
            guard flag.rules.contains(where: { $0.name == name }) else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no rule \"\(name)\"", path: "flags.\(key).rules", subject: .rule)
            }
            flag.rules.removeAll { $0.name == name }
        }
    }

    /// Runs `change` on one existing flag of the set as a versioned write, answering with the flag after it.
    func mutateFlag(
        _ call: Call, _ request: some MutationRequest, action: String, _ change: (inout Flag) throws -> Void
    ) throws -> Reply<MutationResult> {
        let (set, key) = (call.set, call.key)
        let written = try note(call, request, action)
        let result = try service.mutateFlag(set, key, ifMatch: try call.ifMatch(), note: written) { try change(&$0) }
        return mutationReply(result, item: .flag(key))
    }

    /// The audit note of a write of the set: the caller, `action` on the path's flag, cohort or key, the request's
    /// reason, whether it allows what active clients cannot evaluate, and the change request it is to become
    /// (`?propose=TITLE&at=TIME`).
    func note(
        _ call: Call, _ request: some MutationRequest, _ action: String, subject: String? = nil
    ) throws -> ChangeNote {
        var note = ChangeNote(
            actor: call.actor, action: action, subject: subject ?? call.key, reason: request.reason,
            allowIncompatible: request.allowIncompatible ?? false)
        note.proposal = try call.proposalDraft()
        try exemptFromReview(&note, call)
        return note
    }

    /// Kills and restores are never held for review (docs/reviews.md): they go ahead at once whatever the set's
    /// `reviews`. `?withoutReview=REASON` lets an admin not limited to sets write at once too, audited so.
    func exemptFromReview(_ note: inout ChangeNote, _ call: Call) throws {
        note.skipsReview = note.action == "flag.kill" || note.action == "flag.restore"
        guard let reason = call.request.query("withoutReview") else { return }
        let caller = try adminCaller(call)
        guard caller.role == .admin, caller.sets == nil else {
            throw ServiceError.forbidden(
                "withoutReview is for an admin not limited to sets; \"\(caller.name)\" may propose the change")
        }
        guard !reason.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ServiceError.badRequest(
                "withoutReview needs a reason: ?withoutReview=incident+1234", path: "withoutReview")
        }
        if let refusal = reason.controlCharacterRefusal() {
            throw ServiceError.badRequest("withoutReview \(refusal)", path: "withoutReview")
        }
        note.skipsReview = true
        note.reason = [note.reason, "without review: \(reason)"].compactMap { $0 }.joined(separator: "; ")
    }

    /// `PUT …/flags/{key}`: creates or replaces a flag; a new flag's expiry defaults to its kind's lifetime.
    func putFlag(_ call: Call, _ request: PutFlagRequest) throws -> Reply<MutationResult> {
        let key = call.key
        try Self.checkName(.flag(key))
        var flag = try Self.decodeFlag(try Self.parse(request.flag, "flag"), key: key)
        let existed = try requireState(call).bytes(of: .flag(key)) != nil
        // SPEC §1: a kind's lifetime sets the default expiry of a new flag (release 42 days, experiment 90).
        if !existed, flag.expiresAt == nil, let days = flag.kind.lifetimeDays {
            flag.expiresAt = Date(
                timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(days) * 86_400).rounded(.down))
        }
        return try writeItem(call, request, .flag(key), existed: existed, .flag(flag))
    }

    /// A flag that others list as a prerequisite stays: deleting or archiving it is a 409 naming them.
    static func refuseIfRequired(_ key: String, in state: SetState?) throws {
        guard let dependents = state?.compiled.flags(requiring: key), !dependents.isEmpty else { return }
        throw ServiceError.flagRequired(key, by: dependents)
    }

    /// Deletes a flag or a cohort; deleting a cohort that a flag still uses is a 422 naming the reference; deleting
    /// a flag that others require is a 409 naming them.
    func deleteItem(_ call: Call, _ request: ChangeRequest, _ item: ItemKey) throws -> Reply<MutationResult> {
        let set = call.set
        let note = try note(call, request, "\(item.kind.rawValue).delete", subject: item.key)
        let result = try service.mutate(set, ifMatch: try call.ifMatch(), note: note) { current in
            guard current.bytes(of: item) != nil else { throw Self.noItem(item, set) }
            if item.kind == .flag { try Self.refuseIfRequired(item.key, in: current) }
            switch item.kind {
            case .flag: return SetEdit(flags: [item.key: nil])
            case .cohort: return SetEdit(cohorts: [item.key: nil])
            }
        }
        return mutationReply(result)
    }

    /// `POST …/flags/{key}/promote`: `{"from", "withCohorts"?, "withPrerequisites"?}`. The flag's configuration in
    /// set `from` becomes its configuration here, as one version. The flags it requires and the cohorts it uses must
    /// exist here: 422 naming those that do not, unless `withPrerequisites` copies the flags (with the flags they
    /// require) and `withCohorts` the cohorts (with the cohorts they name through `in_cohort`); those that do exist
    /// are left as they are.
    func promote(_ call: Call, _ request: PromoteRequest) throws -> Reply<MutationResult> {
        let (set, key, from) = (call.set, call.key, request.from)
        guard !from.isEmpty else { throw ServiceError.badRequest("\"from\" is required", path: "from") }
        guard from != set else { throw ServiceError.badRequest("\"from\" names this very set", path: "from") }
        if case .admin(let caller)? = call.principal, !caller.mayAccess(from) {
            throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(from)\"")
        }
        let source = try service.requireState(from)
        guard let flag = source.compiled.flag(key) else {
            throw ServiceError.notFound("no flag \"\(key)\" in set \"\(from)\"", path: "from", subject: .flag)
        }
        let withCohorts = request.withCohorts ?? false
        let withPrerequisites = request.withPrerequisites ?? false
        var note = try note(call, request, "flag.promote")
        note.reason = request.reason ?? "from \(from)"
        let result = try service.mutate(set, ifMatch: try call.ifMatch(), note: note) { current in
            // The flags it requires that this set lacks, and, to copy them, the ones they require in turn.
            var flags = [key: flag]
            var lacking: [String] = []
            var required = flag.prerequisites.map(\.flag)
            while let name = required.popLast() {
                guard current.compiled.flag(name) == nil, flags[name] == nil, !lacking.contains(name) else { continue }
                guard withPrerequisites, let copied = source.compiled.flag(name) else {
                    lacking.append(name)
                    continue
                }
                flags[name] = copied
                required += copied.prerequisites.map(\.flag)
            }
            if !lacking.isEmpty {
                throw ServiceError.invalid(
                    lacking.sorted(by: utf8Less).map { name in
                        Problem(
                            path: "flags.\(key).prerequisites",
                            message: "requires flag '\(name)', which set '\(set)' lacks; "
                                + (source.compiled.flag(name) == nil
                                    ? "set '\(from)' lacks it too" : "promote with withPrerequisites to copy it"))
                    })
            }
            // The cohorts they use that this set lacks, and, to copy them, the ones they need in turn.
            var missing: [String: Cohort] = [:]
            var wanted = flags.values.flatMap(\.cohortNames)
            while let name = wanted.popLast() {
                guard current.compiled.cohort(name) == nil, missing[name] == nil else { continue }
                guard let cohort = source.compiled.cohort(name) else { continue }
                missing[name] = cohort
                if withCohorts { wanted += cohort.cohortNames }
            }
            if !withCohorts, !missing.isEmpty {
                throw ServiceError.invalid(
                    missing.keys.sorted(by: utf8Less).map { name in
                        Problem(
                            path: "flags.\(key)",
                            message:
                                "uses cohort '\(name)', which set '\(set)' lacks; promote with withCohorts to copy it")
                    })
            }
            return SetEdit(flags: flags, cohorts: missing.mapValues { $0 })
        }
        return mutationReply(result, item: .flag(key))
    }

    /// `GET …/flags?kind=…&expired=true`.
    func listFlags(_ call: Call, _ query: FlagListQuery) throws -> Reply<FlagList> {
        let state = try requireState(call)
        let kind = query.kind
        if let kind, case .unknown = FlagKind(name: kind) {
            let known = FlagKind.known.map(\.name).joined(separator: ", ")
            throw ServiceError.badRequest("unknown kind '\(kind)' (one of \(known))", path: "kind")
        }
        let expiredOnly = query.expired ?? false
        let now = clock.now()
        var flags: [String: RawJSON] = [:]
        for flag in state.compiled.readableFlags {
            if let kind, flag.kind.name != kind { continue }
            if expiredOnly, !(flag.expiresAt.map { $0 <= now } ?? false) { continue }
            flags[flag.key] = state.bytes(of: .flag(flag.key)).map(RawJSON.init(bytes:))
        }
        return Reply(FlagList(set: call.set, version: state.version, flags: flags), version: state.version)
    }

    /// `GET …/flags/{key}`: the flag's stored bytes and the set's version.
    func getFlag(_ call: Call) throws -> Reply<FlagAnswer> {
        let state = try requireState(call)
        guard let bytes = state.bytes(of: .flag(call.key)) else { throw Self.noFlag(call.key, call.set) }
        return Reply(
            FlagAnswer(set: call.set, version: state.version, key: call.key, flag: RawJSON(bytes: bytes)),
            version: state.version)
    }

    static func noItem(_ item: ItemKey, _ set: String) -> ServiceError {
        item.kind == .flag ? noFlag(item.key, set) : noCohort(item.key, set)
    }

    static func noFlag(_ key: String, _ set: String) -> ServiceError {
        .notFound("no flag \"\(key)\" in set \"\(set)\"", path: "flags.\(key)", subject: .flag)
    }

    static func noCohort(_ name: String, _ set: String) -> ServiceError {
        .notFound("no cohort \"\(name)\" in set \"\(set)\"", path: "cohorts.\(name)", subject: .cohort)
    }

    /// `value`, or `text` read as a value of `type` (`FlagType.value(fromText:)`), so that a client such as flagctl
    /// need not fetch the flag to learn its type; 400 without either, or with both.
    static func requireValue(_ value: RawJSON?, _ text: String?, _ name: String, of type: FlagType) throws -> JSONValue
    {
        let textName = name + "Text"
        switch (value, text) {
        case (nil, nil):
            throw ServiceError.badRequest("\"\(name)\" (or \"\(textName)\") is required", path: name)
        case (let value?, nil): return try parse(value, name)
        case (nil, let text?):
            do {
                return try type.value(fromText: text)
            } catch {
                throw ServiceError.badRequest(error.message, path: textName)
            }
        case (.some, .some):
            throw ServiceError.badRequest("give \"\(name)\" or \"\(textName)\", not both", path: textName)
        }
    }

    /// A member sent as raw JSON, parsed.
    static func parse(_ raw: RawJSON, _ name: String) throws -> JSONValue {
        do {
            return try JSONReader.parse(raw.bytes)
        } catch {
            throw ServiceError.badRequest("\"\(name)\" is not valid JSON: \(error)", path: name)
        }
    }

    /// A duration such as `2h` or `90s`, in seconds.
    static func duration(_ text: String?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        do {
            return try DurationText.parse(text)
        } catch {
            throw ServiceError.badRequest("\"\(name)\": \(error.message)", path: name)
        }
    }
}
