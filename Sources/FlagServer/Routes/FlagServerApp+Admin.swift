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
    func rollback(_ call: Call, _ request: RollbackRequest) throws -> Reply<MutationResult> {
        let note = try note(call, request, "set.rollback", subject: "v\(request.version)")
        return mutationReply(
            try service.rollback(call.set, to: request.version, ifMatch: try call.ifMatch(), note: note))
    }

    /// The mutation response (`MutationResult`), with the version's `ETag`; `item` names the flag or cohort written.
    /// A write that became a change request answers `202 Accepted`, with its id and no item.
    func mutationReply(_ result: WriteResult, status: Int = 200, item: ItemKey? = nil) -> Reply<MutationResult> {
        guard result.proposal == nil else { return Reply(result.answer(), status: 202, version: result.state.version) }
        return Reply(result.answer(naming: item), status: status, version: result.state.version)
    }

    /// `GET /v1/admin/sets`: the sets the caller may access, each with its size, its stale flags (expired and not
    /// archived) and who made its last change.
    func listSets(_ call: Call) throws -> Reply<SetList> {
        let caller = try adminCaller(call)
        let now = clock.now()
        let sets = try service.states().filter { caller.mayAccess($0.name) }.map { state in
            let last = try service.history(state.name, subject: nil, limit: 1).first.map { last in
                LastChange(
                    time: last.audit.time, actor: last.audit.actor, action: last.audit.action,
                    subject: last.audit.subject, reason: last.audit.reason, version: last.version)
            }
            guard let updatedAt = state.updatedAt else {
                throw ServiceError.corrupt(
                    "flag set \"\(state.name)\" v\(state.version) has no updatedAt, which every version the server "
                        + "writes has; restore the store from a backup")
            }
            return SetSummary(
                name: state.name, version: state.version, updatedAt: updatedAt, flags: state.compiled.flagCount,
                cohorts: state.cohortCount, stale: state.compiled.readableFlags.count { $0.isStale(at: now) },
                lastChange: last)
        }
        return Reply(SetList(sets: sets))
    }

    /// `POST /v1/admin/sets`: a new set, empty or made from `document`.
    func createSet(_ call: Call, _ request: CreateSetRequest) throws -> Reply<MutationResult> {
        let name = request.name
        guard !name.isEmpty else { throw ServiceError.badRequest("\"name\" is required", path: "name") }
        let document = try request.document.map { try Self.decodeDocument(raw: $0.bytes) }
        let state = try service.createSet(
            name, from: document,
            note: ChangeNote(actor: call.actor, action: "set.create", subject: name, reason: request.reason))
        return mutationReply(.created(state), status: 201)
    }

    /// `PUT /v1/admin/sets/{set}`: replaces every flag and cohort with those of `document` (creating the set if
    /// needed); with `dryRun` only validates. Either way the answer lists what changes, each item before and after,
    /// so that a client shows the diff without fetching the set.
    func importSet(_ call: Call, _ request: ImportRequest) throws -> Reply<ImportAnswer> {
        let set = call.set
        let document = try Self.decodeDocument(raw: request.document.bytes)
        let note = try note(call, request, "set.import", subject: set)
        if request.dryRun == true {
            return try dryRun(set: set, document: document)
        }
        let caller = try adminCaller(call)
        guard caller.role >= .editor else {
            throw ServiceError.forbidden(
                "an import needs the editor role; the token of \"\(caller.name)\" is a viewer (a dry run it may do)")
        }
        let result: WriteResult
        if service.state(set) == nil {
            if note.proposal != nil {
                throw ServiceError.badRequest(
                    "there is no flag set \"\(set)\" to propose a change to; create it first, then propose the import",
                    path: "propose")
            }
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
            result = try service.replace(set, with: document, ifMatch: try call.ifMatch(), note: note)
        }
        let written = result.answer()
        let changes =
            if let proposal = result.proposal {
                Self.changes(
                    result.changed, before: { proposal.items[$0]?.before }, after: { proposal.items[$0]?.after })
            } else {
                Self.changes(result.changed, before: result.previous?.bytes(of:), after: result.state.bytes(of:))
            }
        let answer = ImportAnswer(
            set: written.set, version: written.version, changed: written.changed,
            warnings: written.warnings.isEmpty ? nil : written.warnings, changes: changes,
            changeRequest: result.proposal?.id)
        let status = result.proposal != nil ? 202 : result.previous == nil ? 201 : 200
        return Reply(answer, status: status, version: result.state.version)
    }

    private func dryRun(set: String, document: FlagSet) throws -> Reply<ImportAnswer> {
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
        return Reply(answer)
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

    /// Reads a whole flag-set document sent inside a request; any read problem, and any control character in the
    /// text of its flags and cohorts (every item of it is written), is a 422 naming its path.
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
        var problems = document.readProblems.filter { $0.path != "schema" }
        for (key, flag) in document.flags.sorted(by: { $0.key < $1.key }) {
            problems += flag.writtenTextProblems.map { Self.problem($0, under: "flags.\(key)") }
        }
        for (name, cohort) in document.cohorts.sorted(by: { $0.key < $1.key }) {
            problems += cohort.writtenTextProblems.map { Self.problem($0, under: "cohorts.\(name)") }
        }
        guard problems.isEmpty else { throw ServiceError.invalid(problems) }
        return document
    }

    private func listLimit(_ asked: Int?) throws -> Int {
        let limit = asked ?? 100
        guard limit >= 1 else { throw ServiceError.badRequest("limit must be at least 1", path: "limit") }
        return min(limit, settings.maxListLimit)
    }

    /// `GET …/history?key=&limit=`: the set's versions, newest first, each with who made it and what it changed.
    func history(_ call: Call, _ query: HistoryQuery) throws -> Reply<History> {
        let versions = try service.history(call.set, subject: query.key, limit: try listLimit(query.limit))
        let entries = versions.map { info in
            HistoryEntry(
                version: info.version, createdAt: info.createdAt, actor: info.audit.actor, action: info.audit.action,
                subject: info.audit.subject, reason: info.audit.reason,
                changed: info.changed.map { ChangedItem(kind: $0.kind.rawValue, key: $0.key) })
        }
        return Reply(History(set: call.set, versions: entries))
    }

    /// `GET …/diff?from=V1&to=V2`: what changed between two versions of the set; `?with=OTHER`: how the current
    /// versions of this set (`before`) and of set OTHER (`after`) differ, for comparing staging with prod.
    func diff(_ call: Call, _ query: DiffQuery) throws -> Reply<DiffAnswer> {
        let set = call.set
        if let other = query.with {
            if case .admin(let caller)? = call.principal, !caller.mayAccess(other) {
                throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(other)\"")
            }
            let (flags, cohorts) = Self.itemDiffs(try service.diff(set, with: other))
            return Reply(DiffAnswer(set: set, with: other, flags: flags, cohorts: cohorts))
        }
        guard let from = query.from else {
            throw ServiceError.badRequest("\"from\" (or \"with\") is required", path: "from")
        }
        guard let to = query.to else { throw ServiceError.badRequest("\"to\" is required", path: "to") }
        let (flags, cohorts) = Self.itemDiffs(try service.diff(set, from: from, to: to))
        return Reply(DiffAnswer(set: set, from: from, to: to, flags: flags, cohorts: cohorts))
    }

    /// The diffs of flags and of cohorts, each item before and after (`null` where it does not exist).
    static func itemDiffs(_ diffs: [ItemVersions]) -> (flags: [ItemDiff], cohorts: [ItemDiff]) {
        func of(_ kind: ItemKind) -> [ItemDiff] {
            diffs.filter { $0.item.kind == kind }.map { diff in
                ItemDiff(
                    key: diff.item.key, before: diff.before.map(RawJSON.init(bytes:)),
                    after: diff.after.map(RawJSON.init(bytes:)))
            }
        }
        return (of(.flag), of(.cohort))
    }

    /// The audit records of one set, or of every set (`?set=` may name one), newest first, filtered by `actor`,
    /// `subject` and a time range (`since`, `until`). A token limited to sets sees only their records.
    func audit(_ call: Call, set: String?, _ query: AuditQuery) throws -> Reply<AuditList> {
        let caller = try adminCaller(call)
        let named = set ?? query.set
        if let named, !caller.mayAccess(named) {
            throw ServiceError.forbidden("the token of \"\(caller.name)\" may not access flag set \"\(named)\"")
        }
        let filter = AuditFilter(
            actor: query.actor, subject: query.subject, since: query.since, until: query.until,
            sets: named == nil ? caller.sets : nil)
        let records = try service.audit(named, filter: filter, limit: try listLimit(query.limit))
        return Reply(AuditList(records: records))
    }

    /// `POST …/evaluate`: evaluates one flag for a context at the current (or a given) time, with every step.
    func evaluate(_ call: Call, _ request: EvaluateRequest) throws -> Reply<EvaluationAnswer> {
        let state = try requireState(call)
        let key = request.key
        guard !key.isEmpty else { throw ServiceError.badRequest("\"key\" is required", path: "key") }
        let unit: String
        if let unitID = request.unitID {
            unit = unitID
        } else if let named = request.unit, !named.isEmpty {
            unit = named
        } else {
            throw ServiceError.badRequest("\"unit\" is required", path: "unit")
        }
        let at = request.at ?? clock.now()
        let (detail, steps) = state.compiled.explain(
            key, context: EvaluationContext(unitID: unit, attributes: request.attributes ?? [:]), at: at)
        let answer = EvaluationAnswer(
            key: key, unit: unit, value: RawJSON(bytes: detail.value.canonicalBytes), reason: detail.reason.rawValue,
            variant: detail.variant, errorCode: detail.errorCode?.rawValue, errorMessage: detail.errorMessage,
            version: detail.version ?? state.version, at: at, steps: steps)
        return Reply(answer, version: state.version)
    }
}
