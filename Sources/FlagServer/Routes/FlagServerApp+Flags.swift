import FlagCore
import Foundation

/// `/v1/admin/sets/{set}/flags/...`: read, replace and delete flags, and the one-purpose actions on a flag.
extension FlagServerApp {
    func flagRoute(_ exchange: Exchange, set: String, _ segments: [String], actor: String) throws -> HTTPResponse {
        let request = exchange.request
        guard let key = segments.first else {
            try exchange.match(.listFlags)
            return try listFlags(request, set: set)
        }
        if segments.count == 1 {
            try exchange.match(.getFlag, .putFlag, .deleteFlag)
            switch request.method {
            case "GET":
                let state = try service.requireState(set)
                guard let bytes = state.items[.flag(key)] else { throw Self.noFlag(key, set) }
                return JSONResponse.object(headers: ["ETag": state.etag]) { writer in
                    writer.member("set", set)
                    writer.member("version", state.version)
                    writer.member("key", key)
                    writer.key("flag")
                    writer.raw(bytes)
                }
            case "PUT": return try putFlag(request, set: set, key: key, actor: actor)
            default: return try deleteItem(request, set: set, item: .flag(key), actor: actor)
            }
        }
        let action = segments.dropFirst().joined(separator: "/")
        if segments.count == 3 && segments[1] == "rules" {
            try exchange.match(.removeRule)
            let name = segments[2]
            return try mutateFlag(request, set: set, key: key, action: "flag.rule.remove", actor: actor) { flag, _ in
                guard flag.rules.contains(where: { $0.name == name }) else {
                    throw ServiceError.notFound("flag \"\(key)\" has no rule \"\(name)\"", path: "flags.\(key).rules")
                }
                flag.rules.removeAll { $0.name == name }
            }
        }
        switch action {
        case "kill", "restore":
            try exchange.match(action == "kill" ? .kill : .restore)
            return try mutateFlag(request, set: set, key: key, action: "flag.\(action)", actor: actor) { flag, _ in
                flag.killed = action == "kill"
            }
        case "archive", "unarchive":
            try exchange.match(action == "archive" ? .archive : .unarchive)
            return try mutateFlag(request, set: set, key: key, action: "flag.\(action)", actor: actor) { flag, _ in
                flag.archived = action == "archive"
            }
        case "default":
            try exchange.match(.setDefault, .putDefault)
            return try mutateFlag(request, set: set, key: key, action: "flag.default", actor: actor) { flag, input in
                flag.defaultValue = try Self.requireValue(input, "value")
            }
        case "expire":
            try exchange.match(.expire)
            return try mutateFlag(request, set: set, key: key, action: "flag.expire", actor: actor) {
                [clock] flag, input in
                flag.expiredValue = try Self.requireValue(input, "keep")
                flag.expiresAt =
                    try input.date("at")
                    ?? Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
            }
        case "overrides":
            try exchange.match(.addOverride, .removeOverride)
            if request.method == "DELETE" {
                return try mutateFlag(request, set: set, key: key, action: "flag.override.remove", actor: actor) {
                    flag, input in
                    let target = try Self.overrideTarget(input)
                    guard flag.overrides.contains(where: { $0.target == target }) else {
                        throw ServiceError.notFound(
                            "flag \"\(key)\" has no such override", path: "flags.\(key).overrides")
                    }
                    flag.overrides.removeAll { $0.target == target }
                }
            }
            return try mutateFlag(request, set: set, key: key, action: "flag.override.add", actor: actor) {
                [clock] flag, input in
                let target = try Self.overrideTarget(input)
                let value = try Self.requireValue(input, "value")
                var until = try input.date("until")
                if until == nil, let seconds = try input.duration("for") {
                    until = Date(
                        timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(seconds)).rounded(.down))
                }
                flag.overrides.removeAll { $0.target == target }
                flag.overrides.append(Override(target: target, value: value, until: until))
            }
        case "rollout":
            try exchange.match(.putRollout, .postRollout, .removeRollout)
            if request.method == "DELETE" {
                return try mutateFlag(request, set: set, key: key, action: "flag.rollout.remove", actor: actor) {
                    flag, _ in
                    flag.rollout = nil
                }
            }
            return try mutateFlag(request, set: set, key: key, action: "flag.rollout.set", actor: actor) {
                [clock] flag, input in
                flag.rollout = try Self.rollout(from: input, now: clock.now())
            }
        case "rollout/pause", "rollout/resume":
            try exchange.match(action == "rollout/pause" ? .pauseRollout : .resumeRollout)
            let pause = action == "rollout/pause"
            return try mutateFlag(
                request, set: set, key: key, action: "flag.rollout.\(pause ? "pause" : "resume")", actor: actor
            ) {
                [clock] flag, _ in
                guard let rollout = flag.rollout else {
                    throw ServiceError.notFound("flag \"\(key)\" has no rollout", path: "flags.\(key).rollout")
                }
                let now = Date(timeIntervalSince1970: clock.now().timeIntervalSince1970.rounded(.down))
                flag.rollout = pause ? rollout.paused(at: now) : rollout.resumed(at: now)
            }
        case "rules":
            try exchange.match(.addRule)
            return try mutateFlag(request, set: set, key: key, action: "flag.rule.add", actor: actor) { flag, input in
                guard let rule = input.value("rule") else {
                    throw ServiceError.badRequest("\"rule\" is required", path: "rule")
                }
                flag = try Self.flag(flag, appendingRule: rule)
            }
        default:
            throw ServiceError.notFound("no route \(request.path)")
        }
    }

    /// Runs `change` on one existing flag of the set as a versioned write, answering with the flag after it.
    func mutateFlag(
        _ request: HTTPRequest, set: String, key: String, action: String, actor: String,
        _ change: (inout Flag, RequestInput) throws -> Void
    ) throws -> HTTPResponse {
        let input = try RequestInput(request)
        let note = ChangeNote(actor: actor, action: action, subject: key, reason: try input.reason())
        let result = try service.mutate(set, ifMatch: try input.ifMatch(), note: note) { next in
            guard var flag = next.flags[key] else { throw Self.noFlag(key, set) }
            try change(&flag, input)
            next.flags[key] = flag
        }
        return mutationResponse(result, item: .flag(key))
    }

    private func putFlag(_ request: HTTPRequest, set: String, key: String, actor: String) throws -> HTTPResponse {
        guard isValidKey(key) else {
            throw ServiceError.badRequest(
                "flag key \"\(key)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "flags.\(key)")
        }
        let input = try RequestInput(request)
        guard let value = input.value("flag") else {
            throw ServiceError.badRequest("\"flag\" is required", path: "flag")
        }
        var flag = try Self.decodeFlag(value, key: key)
        let existed = try service.requireState(set).flagSet.flags[key] != nil
        // SPEC §1: a kind's lifetime sets the default expiry of a new flag (release 42 days, experiment 90).
        if !existed, flag.expiresAt == nil, let days = flag.kind.lifetimeDays {
            flag.expiresAt = Date(
                timeIntervalSince1970: (clock.now().timeIntervalSince1970 + Double(days) * 86_400).rounded(.down))
        }
        let note = ChangeNote(
            actor: actor, action: existed ? "flag.replace" : "flag.create", subject: key, reason: try input.reason())
        let result = try service.mutate(set, ifMatch: try input.ifMatch(), note: note) { next in
            next.flags[key] = flag
        }
        return mutationResponse(result, status: existed ? 200 : 201, item: .flag(key))
    }

    /// Deletes a flag or a cohort; deleting a cohort that a flag still uses is a 422 naming the reference.
    func deleteItem(_ request: HTTPRequest, set: String, item: ItemKey, actor: String) throws -> HTTPResponse {
        let input = try RequestInput(request)
        let note = ChangeNote(
            actor: actor, action: "\(item.kind.rawValue).delete", subject: item.key, reason: try input.reason())
        let result = try service.mutate(set, ifMatch: try input.ifMatch(), note: note) { next in
            switch item.kind {
            case .flag:
                guard next.flags.removeValue(forKey: item.key) != nil else { throw Self.noFlag(item.key, set) }
            case .cohort:
                guard next.cohorts.removeValue(forKey: item.key) != nil else { throw Self.noCohort(item.key, set) }
            }
        }
        return mutationResponse(result)
    }

    private func listFlags(_ request: HTTPRequest, set: String) throws -> HTTPResponse {
        let state = try service.requireState(set)
        let input = try RequestInput(request)
        let kind = try input.string("kind")
        let expiredOnly = try input.bool("expired") ?? false
        let now = clock.now()
        let keys = state.flagSet.flags.filter { _, flag in
            if let kind, flag.kind.name != kind { return false }
            if expiredOnly, !(flag.expiresAt.map { $0 <= now } ?? false) { return false }
            return true
        }.keys.sorted(by: utf8Less)
        return JSONResponse.object(headers: ["ETag": state.etag], capacity: 256 * keys.count + 64) { writer in
            writer.member("set", set)
            writer.member("version", state.version)
            writer.key("flags")
            writer.beginObject()
            for key in keys {
                writer.key(key)
                writer.raw(state.items[.flag(key)] ?? [])
            }
            writer.endObject()
        }
    }

    static func noFlag(_ key: String, _ set: String) -> ServiceError {
        .notFound("no flag \"\(key)\" in set \"\(set)\"", path: "flags.\(key)")
    }

    static func noCohort(_ name: String, _ set: String) -> ServiceError {
        .notFound("no cohort \"\(name)\" in set \"\(set)\"", path: "cohorts.\(name)")
    }

    static func requireValue(_ input: RequestInput, _ name: String) throws -> JSONValue {
        guard let value = input.value(name) else {
            throw ServiceError.badRequest("\"\(name)\" is required", path: name)
        }
        return value
    }
}
