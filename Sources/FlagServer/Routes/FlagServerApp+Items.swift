import FlagCore
import FlagHTTP
import Foundation

/// Cohorts and SDK keys, and reading flags, rules, overrides and rollouts out of request bodies.
extension FlagServerApp {
    /// `GET …/cohorts`, with the flags that use each cohort (`usedBy`).
    func listCohorts(_ call: Call) throws -> HTTPResponse {
        let state = try requireState(call)
        let names = state.compiled.cohortNames.sorted(by: utf8Less)
        return itemsResponse(call, state, .cohort, names: names) { writer in
            writer.key("usedBy")
            writer.beginObject()
            for name in names {
                writer.key(name)
                Self.writeStrings(state.compiled.flags(using: name), to: &writer)
            }
            writer.endObject()
        }
    }

    /// `{"set","version", "flags"|"cohorts": {name: item}}` for the named items of one kind, then what `more`
    /// writes.
    func itemsResponse(
        _ call: Call, _ state: SetState, _ kind: ItemKind, names: [String],
        more: (inout JSONWriter) -> Void = { _ in }
    ) -> HTTPResponse {
        JSONResponse.object(headers: ["ETag": state.etag], capacity: 256 * names.count + 64) { writer in
            writer.member("set", call.set)
            writer.member("version", state.version)
            writer.key("\(kind.rawValue)s")
            writer.beginObject()
            for name in names {
                writer.key(name)
                writer.raw(state.bytes(of: ItemKey(kind, name)) ?? [])
            }
            writer.endObject()
            more(&writer)
        }
    }

    /// A JSON array of strings.
    static func writeStrings(_ strings: [String], to writer: inout JSONWriter) {
        writer.beginArray()
        for string in strings { writer.string(string) }
        writer.endArray()
    }

    /// `PUT …/cohorts/{name}`: `{"cohort"}`, created or replaced.
    func putCohort(_ call: Call) throws -> HTTPResponse {
        let name = call.name
        let (input, value) = try itemBody(call, .cohort(name))
        let cohort = try Self.decodeCohort(value, name: name)
        let existed = try requireState(call).bytes(of: .cohort(name)) != nil
        return try writeItem(call, .cohort(name), input: input, existed: existed, SetEdit(cohorts: [name: cohort]))
    }

    /// `GET` of one flag or cohort: its stored bytes and the set's version.
    func getItem(_ call: Call, _ item: ItemKey) throws -> HTTPResponse {
        let state = try requireState(call)
        guard let bytes = state.bytes(of: item) else { throw Self.noItem(item, call.set) }
        return JSONResponse.object(headers: ["ETag": state.etag]) { writer in
            writer.member("set", call.set)
            writer.member("version", state.version)
            writer.member(item.kind == .flag ? "key" : "name", item.key)
            writer.key(item.kind.rawValue)
            writer.raw(bytes)
            if item.kind == .cohort {
                writer.key("usedBy")
                Self.writeStrings(state.compiled.flags(using: item.key), to: &writer)
            }
        }
    }

    /// The request of a `PUT` of `item` and the member holding it (`"flag"` or `"cohort"`), once the item's name is
    /// known to be valid.
    func itemBody(_ call: Call, _ item: ItemKey) throws -> (RequestInput, JSONValue) {
        let member = item.kind.rawValue
        guard isValidKey(item.key) else {
            let what = item.kind == .flag ? "flag key" : "cohort name"
            throw ServiceError.badRequest(
                "\(what) \"\(item.key)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "\(member)s.\(item.key)")
        }
        let input = try RequestInput(call.request)
        guard let value = input.value(member) else {
            throw ServiceError.badRequest("\"\(member)\" is required", path: member)
        }
        return (input, value)
    }

    /// Writes `edit` (of `item`) as a new version, audited as the item's creation (201) or replacement.
    /// With `If-None-Match: *` it only creates: 409 `already_exists` when the item exists.
    func writeItem(
        _ call: Call, _ item: ItemKey, input: RequestInput, existed: Bool, _ edit: SetEdit
    ) throws -> HTTPResponse {
        let action = "\(item.kind.rawValue).\(existed ? "replace" : "create")"
        let note = ChangeNote(
            actor: call.actor, action: action, subject: item.key, reason: try input.reason(),
            allowIncompatible: try input.allowsIncompatible())
        let createOnly = call.request.headers["If-None-Match"]?.trimmingHTTPSpaces() == "*"
        let result = try service.mutate(call.set, ifMatch: try input.ifMatch(), note: note) { current in
            if createOnly, current.bytes(of: item) != nil {
                throw ServiceError.alreadyExists(
                    "\(item.kind.rawValue) \"\(item.key)\" already exists in set \"\(call.set)\" (If-None-Match: *)",
                    subject: item.kind == .flag ? .flag : .cohort)
            }
            return edit
        }
        return try mutationResponse(result, status: existed ? 200 : 201, item: item)
    }

    /// `DELETE …/keys/{name}`: revoked at once, from the key's next request on.
    func revokeKey(_ call: Call) throws -> HTTPResponse {
        let (set, name) = (call.set, call.name)
        let input = try RequestInput(call.request)
        try tokens.revoke(
            name: name, set: set,
            note: ChangeNote(actor: call.actor, action: "key.revoke", subject: name, reason: try input.reason()))
        return JSONResponse.object { writer in
            writer.member("name", name)
            writer.member("set", set)
            writer.key("revoked")
            writer.bool(true)
        }
    }

    /// `POST …/keys`: `{"name"}`; the key is in this answer only.
    func createKey(_ call: Call) throws -> HTTPResponse {
        let set = call.set
        _ = try requireState(call)
        let input = try RequestInput(call.request)
        let name = try input.requireString("name")
        let (token, record) = try tokens.issue(
            name: name, role: .sdk(set: set),
            note: ChangeNote(actor: call.actor, action: "key.create", subject: name, reason: try input.reason()))
        return JSONResponse.object(status: 201) { writer in
            writer.member("name", record.name)
            writer.member("set", set)
            writer.member("token", token)
            writer.member("createdAt", record.createdAt)
        }
    }

    /// `GET …/keys`: the set's SDK keys, revoked ones included.
    func listKeys(_ call: Call) throws -> HTTPResponse {
        let set = call.set
        _ = try requireState(call)
        let keys = try tokens.tokens(set: set)
        return JSONResponse.list("keys", keys, capacity: 128) { writer, key in
            writer.member("name", key.name)
            writer.member("set", set)
            writer.member("createdAt", key.createdAt)
            writer.member("revokedAt", key.revokedAt)
        }
    }

    /// Reads a flag sent as JSON; every read problem is a 422 with its path inside the set (`flags.KEY.…`).
    static func decodeFlag(_ value: JSONValue, key: String) throws -> Flag {
        guard case .object = value else {
            throw ServiceError.badRequest("\"flag\" must be a JSON object", path: "flag")
        }
        let decoded: (flag: Flag?, problems: [Problem])
        do {
            decoded = try Flag.decode(value.canonicalBytes, key: key)
        } catch {
            throw ServiceError.badRequest("\"flag\" cannot be read: \(error)", path: "flag")
        }
        guard let flag = decoded.flag, decoded.problems.isEmpty else {
            throw ServiceError.invalid(decoded.problems.map { Self.problem($0, under: "flags.\(key)") })
        }
        return flag
    }

    /// Reads a cohort sent as JSON; read problems are a 422 with paths `cohorts.NAME.…`.
    static func decodeCohort(_ value: JSONValue, name: String) throws -> Cohort {
        guard case .object = value else {
            throw ServiceError.badRequest("\"cohort\" must be a JSON object", path: "cohort")
        }
        let decoded: (cohort: Cohort?, problems: [Problem])
        do {
            decoded = try Cohort.decode(value.canonicalBytes)
        } catch {
            throw ServiceError.badRequest("\"cohort\" cannot be read: \(error)", path: "cohort")
        }
        guard let cohort = decoded.cohort, decoded.problems.isEmpty else {
            throw ServiceError.invalid(decoded.problems.map { Self.problem($0, under: "cohorts.\(name)") })
        }
        return cohort
    }

    /// The flag with one more rule, read by the flag reader itself so that a rule reads exactly as in a document.
    /// The rule's `value`, and its rollout's, may come as `valueText` (read as the flag's type); a rule without a
    /// `name` is named after its cohort, or `rule-N` after the rules before it.
    static func flag(_ flag: Flag, appendingRule rule: JSONValue) throws -> Flag {
        guard case .object(var rule) = rule else {
            throw ServiceError.badRequest("\"rule\" must be a JSON object", path: "rule")
        }
        try readValueText(in: &rule, of: flag.type, at: "rule")
        if case .object(var rollout)? = rule["rollout"] {
            try readValueText(in: &rollout, of: flag.type, at: "rule.rollout")
            rule["rollout"] = .object(rollout)
        }
        if rule["name"] == nil {
            let taken = Set(flag.rules.map(\.name))
            var name = "rule-\(flag.rules.count + 1)"
            if case .string(let cohort)? = rule["cohort"] { name = cohort }
            var next = flag.rules.count + 1
            while taken.contains(name) {
                next += 1
                name = "rule-\(next)"
            }
            rule["name"] = .string(name)
        }
        guard case .object(var members) = try JSONReader.parse(flag.encoded()) else { return flag }
        var rules: [JSONValue] = []
        if case .array(let existing)? = members["rules"] { rules = existing }
        rules.append(.object(rule))
        members["rules"] = .array(rules)
        return try decodeFlag(.object(members), key: flag.key)
    }

    /// Replaces `valueText` in `members` by `value`, read as a value of `type`.
    private static func readValueText(in members: inout [String: JSONValue], of type: FlagType, at path: String) throws
    {
        guard let text = members.removeValue(forKey: "valueText") else { return }
        guard members["value"] == nil else {
            throw ServiceError.badRequest("give \"value\" or \"valueText\", not both", path: "\(path).valueText")
        }
        guard case .string(let text) = text else {
            throw ServiceError.badRequest("\"valueText\" must be a string", path: "\(path).valueText")
        }
        do {
            members["value"] = try type.value(fromText: text)
        } catch {
            throw ServiceError.badRequest(error.message, path: "\(path).valueText")
        }
    }

    /// The override target named by exactly one of `unit` and `cohort`.
    static func overrideTarget(_ input: RequestInput) throws -> Override.Target {
        switch (try input.string("unit"), try input.string("cohort")) {
        case (let unit?, nil): return .unit(unit)
        case (nil, let cohort?): return .cohort(cohort)
        default: throw ServiceError.badRequest("give exactly one of \"unit\" and \"cohort\"", path: "unit")
        }
    }

    /// A flag-level rollout from `value` and one of `percent`, `schedule`, `steps` (`0h:1,24h:5`, from `start`)
    /// or `preset` (from `start`, default now).
    static func rollout(from input: RequestInput, type: FlagType, now: Date) throws -> Rollout {
        let value = try requireValue(input, "value", of: type)
        let salt = try input.string("salt")
        let start = try input.date("start") ?? Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        if let preset = try input.string("preset") {
            guard let rollout = Rollout.preset(preset, start: start, value: value, salt: salt) else {
                throw ServiceError.badRequest("unknown preset \"\(preset)\"; known: apple", path: "preset")
            }
            return rollout
        }
        if let percent = try input.double("percent") {
            return Rollout(value: value, stage: .percent(percent), salt: salt)
        }
        if case .array(let items)? = input.value("schedule") {
            var steps: [Rollout.Step] = []
            for (index, item) in items.enumerated() {
                let path = "schedule[\(index)]"
                guard case .object(let step) = item, case .string(let at)? = step["at"],
                    let date = ISO8601.parse(at)
                else { throw ServiceError.badRequest("each step needs \"at\" (ISO-8601) and \"percent\"", path: path) }
                let percent: Double
                switch step["percent"] {
                case .int(let number)?: percent = Double(number)
                case .double(let number)?: percent = number
                default: throw ServiceError.badRequest("\"percent\" must be a number", path: "\(path).percent")
                }
                steps.append(Rollout.Step(at: date, percent: percent))
            }
            return Rollout(value: value, stage: .schedule(steps), salt: salt)
        }
        if let text = try input.string("steps") {
            var steps: [Rollout.Step] = []
            for part in text.split(separator: ",") {
                let pieces = part.split(separator: ":")
                guard pieces.count == 2, let percent = Double(pieces[1].trimmingHTTPSpaces()) else {
                    throw ServiceError.badRequest(
                        "steps are OFFSET:PERCENT, e.g. \"0h:1,24h:5,72h:100\"", path: "steps")
                }
                let offset: Int
                do {
                    offset = try DurationText.parse(pieces[0].trimmingHTTPSpaces())
                } catch {
                    throw ServiceError.badRequest("step '\(part)': \(error.message)", path: "steps")
                }
                steps.append(Rollout.Step(at: start.addingTimeInterval(Double(offset)), percent: percent))
            }
            return Rollout(value: value, stage: .schedule(steps), salt: salt)
        }
        throw ServiceError.badRequest("give one of \"percent\", \"schedule\", \"steps\" or \"preset\"", path: "percent")
    }

    private static func problem(_ problem: Problem, under prefix: String) -> Problem {
        Problem(path: problem.path.isEmpty ? prefix : "\(prefix).\(problem.path)", message: problem.message)
    }
}
