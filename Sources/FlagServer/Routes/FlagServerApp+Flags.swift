import FlagCore
import FlagHTTP
import Foundation

/// `/v1/admin/sets/{set}/flags/...`: read, replace and delete flags, and the one-purpose actions on a flag.
extension FlagServerApp {
    /// `POST …/kill` and `…/restore`.
    func setKilled(_ call: Call, _ killed: Bool) throws -> HTTPResponse {
        try mutateFlag(call, action: killed ? "flag.kill" : "flag.restore") { flag, _ in flag.killed = killed }
    }

    /// `POST …/archive` and `…/unarchive`.
    func setArchived(_ call: Call, _ archived: Bool) throws -> HTTPResponse {
        try mutateFlag(call, action: archived ? "flag.archive" : "flag.unarchive") { flag, _ in
            flag.archived = archived
        }
    }

    /// `POST` or `PUT …/default`: `{"value"}`.
    func setDefault(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.default") { flag, input in
            flag.defaultValue = try Self.requireValue(input, "value", of: flag.type)
        }
    }

    /// `POST …/expire`: `{"keep", "at"?}`, at the current second when `at` is not given.
    func expire(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.expire") { [clock] flag, input in
            flag.expiredValue = try Self.requireValue(input, "keep", of: flag.type)
            flag.expiresAt =
                try input.date("at") ?? Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
        }
    }

    /// `POST …/overrides`: `{"unit"|"cohort", "value", "until"|"for"?}`, replacing an override of the same target.
    func addOverride(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.override.add") { [clock] flag, input in
            let target = try Self.overrideTarget(input)
            let value = try Self.requireValue(input, "value", of: flag.type)
            var until = try input.date("until")
            if until == nil, let seconds = try input.duration("for") {
                until = Date(
                    timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(seconds)).rounded(.down))
            }
            flag.overrides.removeAll { $0.target == target }
            flag.overrides.append(Override(target: target, value: value, until: until))
        }
    }

    /// `DELETE …/overrides?unit=…|cohort=…`.
    func removeOverride(_ call: Call) throws -> HTTPResponse {
        let key = call.key
        return try mutateFlag(call, action: "flag.override.remove") { flag, input in
            let target = try Self.overrideTarget(input)
            guard flag.overrides.contains(where: { $0.target == target }) else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no such override", path: "flags.\(key).overrides", subject: .override)
            }
            flag.overrides.removeAll { $0.target == target }
        }
    }

    /// `PUT` or `POST …/rollout`.
    func setRollout(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.rollout.set") { [clock] flag, input in
            flag.rollout = try Self.rollout(from: input, type: flag.type, now: clock.now())
        }
    }

    /// `DELETE …/rollout`.
    func removeRollout(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.rollout.remove") { flag, _ in flag.rollout = nil }
    }

    /// `POST …/rollout/pause` and `…/rollout/resume`, at the current second.
    func pauseRollout(_ call: Call, _ pause: Bool) throws -> HTTPResponse {
        let key = call.key
        return try mutateFlag(call, action: "flag.rollout.\(pause ? "pause" : "resume")") { [clock] flag, _ in
            guard let rollout = flag.rollout else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no rollout", path: "flags.\(key).rollout", subject: .rollout)
            }
            let now = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
            flag.rollout = pause ? rollout.paused(at: now) : rollout.resumed(at: now)
        }
    }

    /// `POST …/rules`: `{"rule"}`, appended after the flag's rules.
    func addRule(_ call: Call) throws -> HTTPResponse {
        try mutateFlag(call, action: "flag.rule.add") { flag, input in
            guard let rule = input.value("rule") else {
                throw ServiceError.badRequest("\"rule\" is required", path: "rule")
            }
            flag = try Self.flag(flag, appendingRule: rule)
        }
    }

    /// `DELETE …/rules/{name}`.
    func removeRule(_ call: Call) throws -> HTTPResponse {
        let (key, name) = (call.key, call.name)
        return try mutateFlag(call, action: "flag.rule.remove") { flag, _ in
            guard flag.rules.contains(where: { $0.name == name }) else {
                throw ServiceError.notFound(
                    "flag \"\(key)\" has no rule \"\(name)\"", path: "flags.\(key).rules", subject: .rule)
            }
            flag.rules.removeAll { $0.name == name }
        }
    }

    /// Runs `change` on one existing flag of the set as a versioned write, answering with the flag after it.
    func mutateFlag(
        _ call: Call, action: String, _ change: (inout Flag, RequestInput) throws -> Void
    ) throws -> HTTPResponse {
        let (set, key) = (call.set, call.key)
        let input = try RequestInput(call.request)
        let note = ChangeNote(
            actor: call.actor, action: action, subject: key, reason: try input.reason(),
            allowIncompatible: try input.allowsIncompatible())
        let result = try service.mutateFlag(set, key, ifMatch: try input.ifMatch(), note: note) { flag in
            try change(&flag, input)
        }
        return try mutationResponse(result, item: .flag(key))
    }

    /// `PUT …/flags/{key}`: creates or replaces a flag; a new flag's expiry defaults to its kind's lifetime.
    func putFlag(_ call: Call) throws -> HTTPResponse {
        let key = call.key
        let (input, value) = try itemBody(call, .flag(key))
        var flag = try Self.decodeFlag(value, key: key)
        let existed = try requireState(call).bytes(of: .flag(key)) != nil
        // SPEC §1: a kind's lifetime sets the default expiry of a new flag (release 42 days, experiment 90).
        if !existed, flag.expiresAt == nil, let days = flag.kind.lifetimeDays {
            flag.expiresAt = Date(
                timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(days) * 86_400).rounded(.down))
        }
        return try writeItem(call, .flag(key), input: input, existed: existed, .flag(flag))
    }

    /// Deletes a flag or a cohort; deleting a cohort that a flag still uses is a 422 naming the reference.
    func deleteItem(_ call: Call, _ item: ItemKey) throws -> HTTPResponse {
        let set = call.set
        let input = try RequestInput(call.request)
        let note = ChangeNote(
            actor: call.actor, action: "\(item.kind.rawValue).delete", subject: item.key, reason: try input.reason())
        let result = try service.mutate(set, ifMatch: try input.ifMatch(), note: note) { current in
            guard current.bytes(of: item) != nil else { throw Self.noItem(item, set) }
            switch item.kind {
            case .flag: return SetEdit(flags: [item.key: nil])
            case .cohort: return SetEdit(cohorts: [item.key: nil])
            }
        }
        return try mutationResponse(result)
    }

    /// `POST …/flags/{key}/promote`: `{"from", "withCohorts"?}`. The flag's configuration in set `from` becomes
    /// its configuration here, as one version. The cohorts it uses must exist here: 422 naming those that do not,
    /// unless `withCohorts` copies them too (with the cohorts they name through `in_cohort`); the cohorts that do
    /// exist are left as they are.
    func promote(_ call: Call) throws -> HTTPResponse {
        let (set, key) = (call.set, call.key)
        let input = try RequestInput(call.request)
        let from = try input.requireString("from")
        guard from != set else { throw ServiceError.badRequest("\"from\" names this very set", path: "from") }
        if case .admin(let caller)? = call.principal, !caller.mayAccess(from) {
            throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(from)\"")
        }
        let source = try service.requireState(from)
        guard let flag = source.compiled.flag(key) else {
            throw ServiceError.notFound("no flag \"\(key)\" in set \"\(from)\"", path: "from", subject: .flag)
        }
        let withCohorts = try input.bool("withCohorts") ?? false
        let note = ChangeNote(
            actor: call.actor, action: "flag.promote", subject: key, reason: try input.reason() ?? "from \(from)",
            allowIncompatible: try input.allowsIncompatible())
        let result = try service.mutate(set, ifMatch: try input.ifMatch(), note: note) { current in
            // The cohorts the flag needs that this set lacks, and, to copy them, the ones they need in turn.
            var missing: [String: Cohort] = [:]
            var wanted = Array(flag.cohortNames)
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
            return SetEdit(flags: [key: flag], cohorts: missing.mapValues { $0 })
        }
        return try mutationResponse(result, item: .flag(key))
    }

    /// `GET …/flags?kind=…&expired=true`.
    func listFlags(_ call: Call) throws -> HTTPResponse {
        let state = try requireState(call)
        let input = try RequestInput(call.request)
        let kind = try input.string("kind")
        if let kind, case .unknown = FlagKind(name: kind) {
            let known = FlagKind.known.map(\.name).joined(separator: ", ")
            throw ServiceError.badRequest("unknown kind '\(kind)' (one of \(known))", path: "kind")
        }
        let expiredOnly = try input.bool("expired") ?? false
        let now = clock.now()
        let keys = state.compiled.readableFlags.filter { flag in
            if let kind, flag.kind.name != kind { return false }
            if expiredOnly, !(flag.expiresAt.map { $0 <= now } ?? false) { return false }
            return true
        }.map(\.key).sorted(by: utf8Less)
        return itemsResponse(call, state, .flag, names: keys)
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

    /// The member `name`, or `nameText` read as a value of `type` (`RequestInput.value(_:of:)`); 400 without either.
    static func requireValue(_ input: RequestInput, _ name: String, of type: FlagType) throws -> JSONValue {
        guard let value = try input.value(name, of: type) else {
            throw ServiceError.badRequest("\"\(name)\" (or \"\(name)Text\") is required", path: name)
        }
        return value
    }
}
