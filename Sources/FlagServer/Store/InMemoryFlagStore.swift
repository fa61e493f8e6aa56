import Foundation

/// A `FlagStore` in plain memory with the same semantics as `SQLiteFlagStore`, for tests that want no database.
///
/// Rebuilding a snapshot replays every change up to the version: fine for tests, not for production.
public final class InMemoryFlagStore: FlagStore, @unchecked Sendable {
    // @unchecked Sendable is safe: `state` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var state = State()

    private struct StoredVersion {
        var info: VersionInfo
        var change: [ItemKey: [UInt8]?]
    }

    private struct State {
        var sets: [String: [StoredVersion]] = [:]
        var audit: [(set: String?, record: AuditRecord)] = []
        var tokens: [StoredToken] = []
        /// Moved by every token added, revoked or deleted.
        var tokenRevision = 0
        var instances: [String: [String: StoredInstance]] = [:]
        var counts: [UsageKey: UsageCount] = [:]
        var settings: [String: SetSettings] = [:]
        var signingKeys: [String: [StoredSigningKey]] = [:]
        var signed: [SignedKey: SignedBody] = [:]
    }

    private struct SignedKey: Hashable {
        var set: String
        var version: Int
        var kind: SignedBodyKind
    }

    private struct UsageKey: Hashable {
        var set: String
        var flag: String
        var variant: String
        var hour: Int
    }

    /// An empty store.
    public init() {}

    public func sets() throws -> [SetSummary] {
        locked { state in
            state.sets.map { name, versions in
                SetSummary(name: name, version: versions.count, updatedAt: versions[versions.count - 1].info.createdAt)
            }.sorted { $0.name < $1.name }
        }
    }

    @discardableResult
    public func createSet(_ name: String, change: VersionChange, digest: [UInt8], audit: AuditRecord) throws
        -> VersionInfo
    {
        try createSets([SetCreation(name: name, change: change, digest: digest, audit: audit)])[0]
    }

    @discardableResult
    public func createSets(_ sets: [SetCreation]) throws -> [VersionInfo] {
        try locked { state in
            // All names are checked before anything changes, so that a failure leaves no set behind.
            var names: Set<String> = []
            for set in sets where state.sets[set.name] != nil || !names.insert(set.name).inserted {
                throw StoreError.alreadyExists("flag set \"\(set.name)\"")
            }
            return sets.map { set in
                state.sets[set.name] = []
                let initial = set.change.items.filter { $0.value != nil }
                state.signingKeys[set.name] = set.signingKey.map { [$0] }
                return Self.appendVersion(&state, set: set.name, change: initial, digest: set.digest, audit: set.audit)
            }
        }
    }

    public func append(
        set: String, base: Int, change: VersionChange, digest: [UInt8], audit: AuditRecord, signedPatch: SignedBody?
    ) throws -> VersionInfo {
        try locked { state in
            let current = try Self.versions(of: set, state).count
            guard current == base else {
                throw StoreError.conflict(set: set, base: base, current: current)
            }
            if let signedPatch { state.signed[SignedKey(set: set, version: base + 1, kind: .patch)] = signedPatch }
            return Self.appendVersion(&state, set: set, change: change.items, digest: digest, audit: audit)
        }
    }

    public func snapshot(set: String, version: Int?) throws -> Snapshot {
        try locked { state in
            let versions = try Self.versions(of: set, state)
            let wanted = version ?? versions.count
            guard wanted >= 1, wanted <= versions.count else {
                throw StoreError.notFound(set: set, version: wanted)
            }
            var items: [ItemKey: [UInt8]] = [:]
            for stored in versions[0..<wanted] {
                for (key, body) in stored.change {
                    items[key] = body
                }
            }
            let info = versions[wanted - 1].info
            return Snapshot(set: set, version: wanted, createdAt: info.createdAt, items: items, digest: info.digest)
        }
    }

    public func version(set: String, _ version: Int) throws -> VersionInfo {
        try locked { state in
            let versions = try Self.versions(of: set, state)
            guard version >= 1, version <= versions.count else {
                throw StoreError.notFound(set: set, version: version)
            }
            return versions[version - 1].info
        }
    }

    public func history(set: String, subject: String?, limit: Int) throws -> [VersionInfo] {
        try locked { state in
            let infos = try Self.versions(of: set, state).reversed().map(\.info).filter { info in
                guard let subject else { return true }
                return info.audit.subject == subject || info.changed.contains { $0.key == subject }
            }
            return Array(infos.prefix(max(0, limit)))
        }
    }

    public func audit(set: String?, filter: AuditFilter, limit: Int) throws -> [AuditRecord] {
        try locked { state in
            if let set {
                _ = try Self.versions(of: set, state)
            }
            let records = state.audit.reversed().filter { entry in
                (set == nil || entry.set == set) && filter.admits(entry.record, set: entry.set)
            }
            return Array(records.map(\.record).prefix(max(0, limit)))
        }
    }

    public func recordAudit(_ record: AuditRecord, set: String?) throws {
        try locked { state in
            if let set {
                _ = try Self.versions(of: set, state)
            }
            state.audit.append((set, record))
        }
    }

    public func tokens() throws -> [StoredToken] {
        locked { state in state.tokens.sorted { ($0.createdAt, $0.name) < ($1.createdAt, $1.name) } }
    }

    public func addToken(_ token: StoredToken, audit: AuditRecord) throws {
        try locked { state in
            if case .sdk(let set) = token.role {
                _ = try Self.versions(of: set, state)
            }
            guard !state.tokens.contains(where: { $0.name == token.name || $0.hash == token.hash }) else {
                throw StoreError.alreadyExists("a token named \(token.name) or with the same secret")
            }
            state.tokens.append(token)
            state.tokenRevision += 1
            state.audit.append((Self.set(of: token), audit))
        }
    }

    public func revokeToken(name: String, at time: Date, audit: AuditRecord) throws -> Bool {
        locked { state in
            guard let index = state.tokens.firstIndex(where: { $0.name == name && $0.revokedAt == nil }) else {
                return false
            }
            state.tokens[index].revokedAt = time
            state.tokenRevision += 1
            for session in state.tokens.indices
            where state.tokens[session].sessionOf == name && state.tokens[session].revokedAt == nil {
                state.tokens[session].revokedAt = time
            }
            state.audit.append((Self.set(of: state.tokens[index]), audit))
            return true
        }
    }

    public func recordTokenUses(_ uses: [String: Date]) throws {
        locked { state in
            for index in state.tokens.indices {
                guard let time = uses[state.tokens[index].name] else { continue }
                state.tokens[index].lastUsedAt = max(state.tokens[index].lastUsedAt ?? time, time)
            }
        }
    }

    public func changes(set: String, since base: Int) throws -> SetChanges {
        try locked { state in
            let versions = try Self.versions(of: set, state)
            var items: [ItemKey: [UInt8]?] = [:]
            for stored in versions.dropFirst(max(0, base)) {
                for (key, body) in stored.change { items[key] = .some(body) }
            }
            let current = versions[versions.count - 1].info
            return SetChanges(
                set: set, version: current.version, createdAt: current.createdAt, digest: current.digest, items: items)
        }
    }

    public func tokenRevision() throws -> Int {
        locked { $0.tokenRevision }
    }

    public func deleteSessions(endedBefore before: Date) throws -> Int {
        locked { state in
            let count = state.tokens.count
            state.tokens.removeAll { token in
                token.sessionOf != nil && ((token.revokedAt ?? token.expiresAt).map { $0 < before } ?? false)
            }
            let deleted = count - state.tokens.count
            if deleted > 0 { state.tokenRevision += 1 }
            return deleted
        }
    }

    public func recordTelemetry(_ batch: TelemetryBatch) throws {
        locked { state in
            for instance in batch.instances { state.instances[instance.set, default: [:]][instance.id] = instance }
            for count in batch.counts {
                let key = UsageKey(set: count.set, flag: count.flag, variant: count.variant, hour: count.hour)
                if var stored = state.counts[key] {
                    stored.count += count.count
                    stored.lastAt = max(stored.lastAt, count.lastAt)
                    state.counts[key] = stored
                } else {
                    state.counts[key] = count
                }
            }
        }
    }

    public func instances(set: String, seenSince since: Date) throws -> [StoredInstance] {
        locked { state in
            (state.instances[set] ?? [:]).values.filter { $0.lastSeen >= since }.sorted { $0.id < $1.id }
        }
    }

    public func instance(set: String, id: String, seenSince since: Date) throws -> StoredInstance? {
        locked { state in state.instances[set]?[id].flatMap { $0.lastSeen >= since ? $0 : nil } }
    }

    public func usage(set: String, flag: String?, fromHour: Int) throws -> [UsageCount] {
        locked { state in
            state.counts.values.filter { count in
                count.set == set && count.hour >= fromHour && (flag == nil || count.flag == flag)
            }.sorted { ($0.flag, $0.hour, $0.variant) < ($1.flag, $1.hour, $1.variant) }
        }
    }

    public func pruneTelemetry(countsBefore: Int, instancesBefore: Date) throws {
        locked { state in
            state.counts = state.counts.filter { $0.value.hour >= countsBefore }
            for set in Array(state.instances.keys) {
                state.instances[set] = state.instances[set]?.filter { $0.value.lastSeen >= instancesBefore }
            }
        }
    }

    public func settings(set: String) throws -> SetSettings {
        try locked { state in
            _ = try Self.versions(of: set, state)
            return state.settings[set] ?? SetSettings()
        }
    }

    public func updateSettings(set: String, _ settings: SetSettings, audit: AuditRecord) throws {
        try locked { state in
            _ = try Self.versions(of: set, state)
            state.settings[set] = settings
            state.audit.append((set, audit))
        }
    }

    public func signingKeys(set: String) throws -> [StoredSigningKey] {
        try locked { state in
            _ = try Self.versions(of: set, state)
            return state.signingKeys[set] ?? []
        }
    }

    public func updateSigningKeys(
        set: String, _ keys: [StoredSigningKey], resigned: (version: Int, document: SignedBody)?, audit: AuditRecord
    ) throws {
        try locked { state in
            _ = try Self.versions(of: set, state)
            state.signingKeys[set] = keys
            if let resigned {
                state.signed[SignedKey(set: set, version: resigned.version, kind: .document)] = resigned.document
            }
            state.audit.append((set, audit))
        }
    }

    public func signedBody(set: String, version: Int, _ kind: SignedBodyKind) throws -> SignedBody? {
        locked { state in state.signed[SignedKey(set: set, version: version, kind: kind)] }
    }

    public func keepSignedDocument(set: String, version: Int, _ document: SignedBody) throws -> SignedBody {
        try locked { state in
            let versions = try Self.versions(of: set, state)
            guard version >= 1, version <= versions.count else {
                throw StoreError.notFound(set: set, version: version)
            }
            let key = SignedKey(set: set, version: version, kind: .document)
            if let kept = state.signed[key] { return kept }
            state.signed[key] = document
            return document
        }
    }

    private func locked<T>(_ body: (inout State) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    private static func versions(of set: String, _ state: State) throws -> [StoredVersion] {
        guard let versions = state.sets[set] else {
            throw StoreError.notFound(set: set)
        }
        return versions
    }

    private static func set(of token: StoredToken) -> String? {
        if case .sdk(let set) = token.role { return set }
        return nil
    }

    private static func appendVersion(
        _ state: inout State,
        set: String,
        change: [ItemKey: [UInt8]?],
        digest: [UInt8],
        audit: AuditRecord
    ) -> VersionInfo {
        let version = (state.sets[set]?.count ?? 0) + 1
        var record = audit
        record.version = version
        let info = VersionInfo(
            set: set, version: version, createdAt: audit.time, digest: digest, audit: record,
            changed: change.keys.sorted()
        )
        state.sets[set, default: []].append(StoredVersion(info: info, change: change))
        state.audit.append((set, record))
        return info
    }
}
