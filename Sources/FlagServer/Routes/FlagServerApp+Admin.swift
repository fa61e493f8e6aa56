import FlagAPI
import FlagCore
import FlagHTTP
import Foundation

/// The admin API under `/v1/admin` (admin token only); shapes are documented in `docs/admin-api.md`.
extension FlagServerApp {
    /// `GET /v1/admin/sets/{set}`: the set's current document.
    func exportSet(_ call: Call) throws -> HTTPResponse {
        let (state, served) = try service.servedVersion(call.set)
        return VersionAnswers.document(of: state, served)
    }

    /// `POST …/rollback`: a new version whose content is that of `version`.
    func rollback(_ call: Call) throws -> HTTPResponse {
        let input = try RequestInput(call.request)
        guard let version = try input.int("version") else {
            throw ServiceError.badRequest("\"version\" is required", path: "version")
        }
        let note = ChangeNote(
            actor: call.actor, action: "set.rollback", subject: "v\(version)", reason: try input.reason(),
            allowIncompatible: try input.allowsIncompatible())
        return try mutationResponse(
            try service.rollback(call.set, to: version, ifMatch: try input.ifMatch(), note: note))
    }

    /// The mutation response (`MutationResult`), with the version's `ETag`; `item` names the flag or cohort written.
    func mutationResponse(_ result: WriteResult, status: Int = 200, item: ItemKey? = nil) throws -> HTTPResponse {
        try JSONResponse.answer(Reply(result.answer(naming: item), status: status, version: result.state.version))
    }

    /// `GET /v1/admin/sets`: the sets the caller may access, each with its size, its stale flags (expired and not
    /// archived) and who made its last change.
    func listSets(_ call: Call) throws -> HTTPResponse {
        let caller = try adminCaller(call)
        let now = clock.now()
        let states = service.states().filter { caller.mayAccess($0.name) }
        let lastChanges = try states.map { try service.history($0.name, subject: nil, limit: 1).first }
        return JSONResponse.list("sets", Array(zip(states, lastChanges)), capacity: 256) { writer, entry in
            let (state, last) = entry
            writer.member("name", state.name)
            writer.member("version", state.version)
            writer.member("updatedAt", state.updatedAt)
            writer.member("flags", state.compiled.flagCount)
            writer.member("cohorts", state.cohortCount)
            writer.member("stale", state.compiled.readableFlags.count { $0.isStale(at: now) })
            if let last {
                writer.key("lastChange")
                writer.beginObject()
                writer.member("time", last.audit.time)
                Self.writeAuditMembers(last.audit, to: &writer)
                writer.member("version", last.version)
                writer.endObject()
            }
        }
    }

    func createSet(_ call: Call) throws -> HTTPResponse {
        let (input, raw) = try RequestInput.reading(call.request, rawMember: "document")
        let name = try input.requireString("name")
        let document = try raw.map { try Self.decodeDocument(raw: $0) }
        let state = try service.createSet(
            name, from: document,
            note: ChangeNote(actor: call.actor, action: "set.create", subject: name, reason: try input.reason()))
        return try mutationResponse(.created(state), status: 201)
    }

    /// `PUT /v1/admin/sets/{set}`: replaces every flag and cohort with those of `document` (creating the set if
    /// needed); with `dryRun` only validates. Either way the answer lists what changes, each item before and after,
    /// so that a client shows the diff without fetching the set.
    func importSet(_ call: Call) throws -> HTTPResponse {
        let set = call.set
        let (input, raw) = try RequestInput.reading(call.request, rawMember: "document")
        guard let raw else { throw ServiceError.badRequest("\"document\" is required", path: "document") }
        let document = try Self.decodeDocument(raw: raw)
        let note = ChangeNote(
            actor: call.actor, action: "set.import", subject: set, reason: try input.reason(),
            allowIncompatible: try input.allowsIncompatible())
        if try input.bool("dryRun") == true {
            return try dryRun(set: set, document: document)
        }
        let caller = try adminCaller(call)
        guard caller.role >= .editor else {
            throw ServiceError.forbidden(
                "an import needs the editor role; the token of \"\(caller.name)\" is a viewer (a dry run it may do)")
        }
        let result: WriteResult
        if service.state(set) == nil {
            // Importing a set that does not exist creates it: only a caller who may create sets may.
            do {
                try Self.check(caller, against: Route.createSet.spec.access, set: set)
            } catch {
                throw ServiceError.forbidden(
                    "there is no flag set \"\(set)\", and importing one creates it, which needs what POST "
                        + "/v1/admin/sets needs: an admin token not limited to sets (\"\(caller.name)\" is "
                        + "\(caller.sets == nil ? "" : "limited to sets and ")a \(caller.role.rawValue))")
            }
            result = .created(try service.createSet(set, from: document, note: note))
        } else {
            result = try service.replace(set, with: document, ifMatch: try input.ifMatch(), note: note)
        }
        let written = result.answer()
        let answer = ImportAnswer(
            set: written.set, version: written.version, changed: written.changed,
            warnings: written.warnings.isEmpty ? nil : written.warnings,
            changes: Self.changes(result.changed, before: result.previous?.bytes(of:), after: result.state.bytes(of:)))
        return try JSONResponse.answer(
            Reply(answer, status: result.previous == nil ? 201 : 200, version: result.state.version))
    }

    private func dryRun(set: String, document: FlagSet) throws -> HTTPResponse {
        var candidate = document
        candidate.name = set
        let problems = CompiledFlagSet(candidate).problems
        guard problems.isEmpty else { throw ServiceError.invalid(problems) }
        let current = service.state(set)
        let after = SetState.items(of: candidate)
        let change = SetState.change(from: current?.items ?? [:], to: after)
        var fates: [ItemKind: [String: String]] = [.flag: [:], .cohort: [:]]
        for item in change.keys {
            fates[item.kind]?[item.key] =
                current?.bytes(of: item) == nil ? "added" : (change[item] == .some(nil) ? "removed" : "changed")
        }
        let answer = ImportAnswer(
            set: set, version: current?.version ?? 0, dryRun: true, flags: fates[.flag], cohorts: fates[.cohort],
            changes: Self.changes(change.keys.sorted(), before: current?.bytes(of:), after: { after[$0] }))
        return try JSONResponse.answer(Reply(answer))
    }

    /// Each changed item as it was and as it is (`null` where it does not exist).
    static func changes(
        _ items: [ItemKey], before: ((ItemKey) -> [UInt8]?)?, after: (ItemKey) -> [UInt8]?
    ) -> ItemChanges {
        var flags: [String: ItemChange] = [:]
        var cohorts: [String: ItemChange] = [:]
        for item in items {
            let change = ItemChange(
                before: before?(item).map(RawJSON.init(bytes:)), after: after(item).map(RawJSON.init(bytes:)))
            switch item.kind {
            case .flag: flags[item.key] = change
            case .cohort: cohorts[item.key] = change
            }
        }
        return ItemChanges(flags: flags, cohorts: cohorts)
    }

    /// Reads a whole flag-set document sent inside a request; any read problem is a 422 naming its path.
    static func decodeDocument(raw: [UInt8]) throws -> FlagSet {
        let first = raw.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        guard first == UInt8(ascii: "{") else {
            throw ServiceError.badRequest("\"document\" must be a JSON object", path: "document")
        }
        let document: FlagSet
        do {
            document = try FlagSet.decode(raw)
        } catch {
            throw ServiceError.badRequest("\"document\" cannot be read: \(error)", path: "document")
        }
        let problems = document.readProblems.filter { $0.path != "schema" }
        guard problems.isEmpty else { throw ServiceError.invalid(problems) }
        return document
    }

    private func listLimit(_ input: RequestInput) throws -> Int {
        let limit = try input.int("limit") ?? 100
        guard limit >= 1 else { throw ServiceError.badRequest("limit must be at least 1", path: "limit") }
        return min(limit, settings.maxListLimit)
    }

    func historyResponse(_ call: Call) throws -> HTTPResponse {
        let set = call.set
        let input = try RequestInput(call.request)
        let versions = try service.history(set, subject: try input.string("key"), limit: try listLimit(input))
        return JSONResponse.object(capacity: 256 * versions.count + 64) { writer in
            writer.member("set", set)
            writer.key("versions")
            writer.beginArray()
            for info in versions {
                writer.beginObject()
                writer.member("version", info.version)
                writer.member("createdAt", info.createdAt)
                Self.writeAuditMembers(info.audit, to: &writer)
                writer.key("changed")
                writer.beginArray()
                for item in info.changed {
                    writer.beginObject()
                    writer.member("kind", item.kind.rawValue)
                    writer.member("key", item.key)
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// `GET …/diff?from=V1&to=V2`: what changed between two versions of the set; `?with=OTHER`: how the current
    /// versions of this set (`before`) and of set OTHER (`after`) differ, for comparing staging with prod.
    func diffResponse(_ call: Call) throws -> HTTPResponse {
        let set = call.set
        let input = try RequestInput(call.request)
        if let other = try input.string("with") {
            if case .admin(let caller)? = call.principal, !caller.mayAccess(other) {
                throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(other)\"")
            }
            let diffs = try service.diff(set, with: other)
            return JSONResponse.object(capacity: 1024) { writer in
                writer.member("set", set)
                writer.member("with", other)
                Self.writeDiffs(diffs, to: &writer)
            }
        }
        guard let from = try input.int("from") else {
            throw ServiceError.badRequest("\"from\" (or \"with\") is required", path: "from")
        }
        guard let to = try input.int("to") else { throw ServiceError.badRequest("\"to\" is required", path: "to") }
        let diffs = try service.diff(set, from: from, to: to)
        return JSONResponse.object(capacity: 1024) { writer in
            writer.member("set", set)
            writer.member("from", from)
            writer.member("to", to)
            Self.writeDiffs(diffs, to: &writer)
        }
    }

    /// `"flags": [{"key","before","after"}], "cohorts": [{"key","before","after"}]`.
    static func writeDiffs(_ diffs: [ItemDiff], to writer: inout JSONWriter) {
        for (field, kind) in [("flags", ItemKind.flag), ("cohorts", ItemKind.cohort)] {
            writer.key(field)
            writer.beginArray()
            for diff in diffs where diff.item.kind == kind {
                writer.beginObject()
                writer.member("key", diff.item.key)
                writer.key("before")
                if let before = diff.before { writer.raw(before) } else { writer.null() }
                writer.key("after")
                if let after = diff.after { writer.raw(after) } else { writer.null() }
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// The audit records of one set, or of every set (`?set=` may name one), newest first, filtered by `actor`,
    /// `subject` and a time range (`since`, `until`). A token limited to sets sees only their records.
    func auditResponse(_ call: Call, set: String?) throws -> HTTPResponse {
        let caller = try adminCaller(call)
        let input = try RequestInput(call.request)
        let named = try set ?? input.string("set")
        if let named, !caller.mayAccess(named) {
            throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(named)\"")
        }
        let filter = AuditFilter(
            actor: try input.string("actor"), subject: try input.string("subject"), since: try input.date("since"),
            until: try input.date("until"), sets: named == nil ? caller.sets : nil)
        let records = try service.audit(named, filter: filter, limit: try listLimit(input))
        return JSONResponse.list("records", records, capacity: 192) { writer, record in
            writer.member("time", record.time)
            Self.writeAuditMembers(record, to: &writer)
            if let version = record.version { writer.member("version", version) }
        }
    }

    static func writeAuditMembers(_ record: AuditRecord, to writer: inout JSONWriter) {
        writer.member("actor", record.actor)
        writer.member("action", record.action)
        writer.member("subject", record.subject)
        writer.member("reason", record.reason)
    }

    /// `POST …/evaluate`: evaluates one flag for a context at the current (or a given) time, with every step.
    func evaluateResponse(_ call: Call) throws -> HTTPResponse {
        let state = try requireState(call)
        let input = try RequestInput(call.request)
        let key = try input.requireString("key")
        let unit = try input.string("unitID") ?? input.requireString("unit")
        var attributes: [String: String] = [:]
        switch input.value("attributes") {
        case .object(let members)?:
            for (name, value) in members {
                guard case .string(let text) = value else {
                    throw ServiceError.badRequest("attribute values are strings", path: "attributes.\(name)")
                }
                attributes[name] = text
            }
        case nil, .null?: break
        case .some: throw ServiceError.badRequest("\"attributes\" must be an object of strings", path: "attributes")
        }
        let at = try input.date("at") ?? clock.now()
        let (detail, steps) = state.compiled.explain(
            key, context: EvaluationContext(unitID: unit, attributes: attributes), at: at)
        return JSONResponse.object(headers: ["ETag": state.etag]) { writer in
            writer.member("key", key)
            writer.member("unit", unit)
            writer.key("value")
            writer.value(detail.value)
            writer.member("reason", detail.reason.rawValue)
            writer.member("variant", detail.variant)
            writer.member("errorCode", detail.errorCode?.rawValue)
            writer.member("errorMessage", detail.errorMessage)
            writer.member("version", detail.version ?? state.version)
            writer.member("at", at)
            writer.key("steps")
            writer.beginArray()
            for step in steps { writer.string(step) }
            writer.endArray()
        }
    }
}
