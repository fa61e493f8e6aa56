import FlagAPI
import FlagCore
import FlagHTTP
import Foundation

/// Cohorts and SDK keys, and reading flags, rules, overrides and rollouts out of request bodies.
extension FlagServerApp {
    /// `GET …/cohorts`, with the flags that use each cohort (`usedBy`).
    func listCohorts(_ call: Call) throws -> Reply<CohortList> {
        let state = try requireState(call)
        var cohorts: [String: RawJSON] = [:]
        var usedBy: [String: [String]] = [:]
        for name in state.compiled.cohortNames {
            cohorts[name] = state.bytes(of: .cohort(name)).map(RawJSON.init(bytes:))
            usedBy[name] = state.compiled.flags(using: name)
        }
        return Reply(
            CohortList(set: call.set, version: state.version, cohorts: cohorts, usedBy: usedBy), version: state.version)
    }

    /// `GET …/cohorts/{name}`: the cohort's stored bytes, the set's version and the flags that use it.
    func getCohort(_ call: Call) throws -> Reply<CohortAnswer> {
        let (state, name) = (try requireState(call), call.name)
        guard let bytes = state.bytes(of: .cohort(name)) else { throw Self.noCohort(name, call.set) }
        let answer = CohortAnswer(
            set: call.set, version: state.version, name: name, cohort: RawJSON(bytes: bytes),
            usedBy: state.compiled.flags(using: name))
        return Reply(answer, version: state.version)
    }

    /// `PUT …/cohorts/{name}`: `{"cohort"}`, created or replaced.
    func putCohort(_ call: Call, _ request: PutCohortRequest) throws -> Reply<MutationResult> {
        let name = call.name
        try Self.checkName(.cohort(name))
        let cohort = try Self.decodeCohort(try Self.parse(request.cohort, "cohort"), name: name)
        let existed = try requireState(call).bytes(of: .cohort(name)) != nil
        return try writeItem(call, request, .cohort(name), existed: existed, SetEdit(cohorts: [name: cohort]))
    }

    /// A 400 unless the flag key or cohort name of a `PUT` is valid.
    static func checkName(_ item: ItemKey) throws {
        guard isValidKey(item.key) else {
            let what = item.kind == .flag ? "flag key" : "cohort name"
            throw ServiceError.badRequest(
                "\(what) \"\(item.key)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$",
                path: "\(item.kind.rawValue)s.\(item.key)")
        }
    }

    /// Writes `edit` (of `item`) as a new version, audited as the item's creation (201) or replacement.
    /// With `If-None-Match: *` it only creates: 409 `already_exists` when the item exists.
    func writeItem(
        _ call: Call, _ request: some MutationRequest, _ item: ItemKey, existed: Bool, _ edit: SetEdit
    ) throws -> Reply<MutationResult> {
        let action = "\(item.kind.rawValue).\(existed ? "replace" : "create")"
        let note = try note(call, request, action, subject: item.key)
        let createOnly = call.request.headers["If-None-Match"]?.trimmingHTTPSpaces() == "*"
        let result = try service.mutate(call.set, ifMatch: try call.ifMatch(), note: note) { current in
            if createOnly, current.bytes(of: item) != nil {
                throw ServiceError.alreadyExists(
                    "\(item.kind.rawValue) \"\(item.key)\" already exists in set \"\(call.set)\" (If-None-Match: *)",
                    subject: item.kind == .flag ? .flag : .cohort)
            }
            return edit
        }
        return mutationReply(result, status: existed ? 200 : 201, item: item)
    }

    /// `DELETE …/keys/{name}`: revoked at once, from the key's next request on.
    func revokeKey(_ call: Call, _ request: ChangeRequest) throws -> Reply<RevokedKey> {
        let (set, name) = (call.set, call.name)
        try tokens.revoke(
            name: name, set: set,
            note: ChangeNote(actor: call.actor, action: "key.revoke", subject: name, reason: request.reason))
        return Reply(RevokedKey(name: name, set: set))
    }

    /// `POST …/keys`: `{"name"}`; the key is in this answer only.
    func createKey(_ call: Call, _ request: CreateKeyRequest) throws -> Reply<CreatedKey> {
        let (set, name) = (call.set, request.name)
        _ = try requireState(call)
        guard !name.isEmpty else { throw ServiceError.badRequest("\"name\" is required", path: "name") }
        let (token, record) = try tokens.issue(
            name: name, role: .sdk(set: set),
            note: ChangeNote(actor: call.actor, action: "key.create", subject: name, reason: request.reason))
        return Reply(CreatedKey(name: record.name, set: set, token: token, createdAt: record.createdAt), status: 201)
    }

    /// `GET …/keys`: the set's SDK keys, revoked ones included.
    func listKeys(_ call: Call) throws -> Reply<KeyList> {
        let set = call.set
        _ = try requireState(call)
        let keys = try tokens.tokens(set: set).map { key in
            KeyInfo(name: key.name, set: set, createdAt: key.createdAt, revokedAt: key.revokedAt)
        }
        return Reply(KeyList(keys: keys))
    }

    /// Reads a flag sent as JSON; every read problem is a 422 with its path inside the set (`flags.KEY.…`).
    static func decodeFlag(_ value: JSONValue, key: String) throws -> Flag {
        try decodeItem(value, member: "flag", under: "flags.\(key)", check: \.writtenTextProblems) {
            try Flag.decode($0, key: key)
        }
    }

    /// Reads a cohort sent as JSON; read problems are a 422 with paths `cohorts.NAME.…`.
    static func decodeCohort(_ value: JSONValue, name: String) throws -> Cohort {
        try decodeItem(value, member: "cohort", under: "cohorts.\(name)", check: \.writtenTextProblems) {
            try Cohort.decode($0)
        }
    }

    /// Reads the flag or cohort a request sends as its member `member` with `decode`: a value that is not an object
    /// or cannot be read is a 400 naming `member`, and its read problems are a 422 with paths under `prefix`, as are
    /// those `check` finds in the item read (control characters in its text: only the items written are checked).
    private static func decodeItem<Item>(
        _ value: JSONValue, member: String, under prefix: String, check: (Item) -> [Problem],
        _ decode: ([UInt8]) throws -> (Item?, [Problem])
    ) throws -> Item {
        guard case .object = value else {
            throw ServiceError.badRequest("\"\(member)\" must be a JSON object", path: member)
        }
        let decoded: (item: Item?, problems: [Problem])
        do {
            decoded = try decode(value.canonicalBytes)
        } catch {
            throw ServiceError.badRequest("\"\(member)\" cannot be read: \(error)", path: member)
        }
        guard let item = decoded.item, decoded.problems.isEmpty else {
            throw ServiceError.invalid(decoded.problems.map { Self.problem($0, under: prefix) })
        }
        let problems = check(item)
        guard problems.isEmpty else { throw ServiceError.invalid(problems.map { Self.problem($0, under: prefix) }) }
        return item
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
    static func overrideTarget(unit: String?, cohort: String?) throws -> Override.Target {
        switch (unit, cohort) {
        case (let unit?, nil): return .unit(unit)
        case (nil, let cohort?): return .cohort(cohort)
        default: throw ServiceError.badRequest("give exactly one of \"unit\" and \"cohort\"", path: "unit")
        }
    }

    /// A flag-level rollout from `value` and one of `percent`, `schedule`, `steps` (`0h:1,24h:5`, from `start`)
    /// or `preset` (from `start`, default now).
    static func rollout(from request: RolloutRequest, type: FlagType, now: Date) throws -> Rollout {
        let value = try requireValue(request.value, request.valueText, "value", of: type)
        let salt = request.salt
        let start = request.start ?? Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        if let preset = request.preset {
            guard let rollout = Rollout.preset(preset, start: start, value: value, salt: salt) else {
                throw ServiceError.badRequest("unknown preset \"\(preset)\"; known: apple", path: "preset")
            }
            return rollout
        }
        if let percent = request.percent {
            return Rollout(value: value, stage: .percent(percent), salt: salt)
        }
        if let schedule = request.schedule {
            let steps = schedule.map { Rollout.Step(at: $0.at, percent: $0.percent) }
            return Rollout(value: value, stage: .schedule(steps), salt: salt)
        }
        if let text = request.steps {
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

    /// `problem` with its path under `prefix` (`flags.KEY`).
    static func problem(_ problem: Problem, under prefix: String) -> Problem {
        Problem(path: problem.path.isEmpty ? prefix : "\(prefix).\(problem.path)", message: problem.message)
    }
}
