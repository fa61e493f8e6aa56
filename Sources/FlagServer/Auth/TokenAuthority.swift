import FlagAPI
import FlagCore
import FlagLock
import Foundation
import Synchronization

/// A caller of the admin API: who acts, with which role, on which sets.
package struct AdminCaller: Sendable, Hashable {
    /// Who acts, the actor in the audit log: the token's name, or for a dashboard session the name of the token the
    /// session was made from.
    package let name: String
    /// The token's own name (a session's differs from `name`).
    package let token: String
    /// What it may do.
    package let role: AdminRole
    /// The sets it may act on; `nil` for every set.
    package let sets: Set<String>?
    /// Whether the token is a dashboard session.
    package let isSession: Bool
    /// When the token stops working, if it does.
    package let expiresAt: Date?

    /// Whether it may act on `set` at all (its role says how).
    package func mayAccess(_ set: String) -> Bool {
        sets.map { $0.contains(set) } ?? true
    }
}

/// Who a request's token says it comes from.
package enum Principal: Sendable, Hashable {
    /// A token of the admin API.
    case admin(AdminCaller)
    /// An SDK key: may read one set.
    case sdk(name: String, set: String)

    /// The actor in the audit log.
    package var name: String {
        switch self {
        case .admin(let caller): caller.name
        case .sdk(let name, _): name
        }
    }

    /// Whether the principal may read `set` through the client routes: an SDK key its own set, a token of the admin
    /// API any set it may access.
    package func mayRead(_ set: String) -> Bool {
        switch self {
        case .admin(let caller): caller.mayAccess(set)
        case .sdk(_, let own): own == set
        }
    }

    /// Whether the principal is an SDK key.
    package var isSDKKey: Bool {
        if case .sdk = self { return true }
        return false
    }

    /// When the token stops working, if it does.
    var expiresAt: Date? {
        if case .admin(let caller) = self { return caller.expiresAt }
        return nil
    }

    /// The name of the token, unless it is the environment's, which cannot be revoked.
    var revocableName: String? {
        switch self {
        case .admin(let caller): caller.token == TokenAuthority.environmentTokenName ? nil : caller.token
        case .sdk(let name, _): name
        }
    }
}

/// Checks bearer tokens and issues new ones. Tokens are kept only as SHA-256 hashes; a presented token is hashed,
/// looked up by hash, and compared in constant time. No token ever reaches a log line or an error message.
package final class TokenAuthority: Sendable {
    /// The name `FLAGSERVER_ADMIN_TOKEN` acts under in the audit log.
    package static let environmentTokenName = "env"
    /// How long a dashboard session lasts.
    package static let sessionLifetime: TimeInterval = 12 * 3600
    /// Active dashboard sessions a token may have at once; starting one more signs the oldest out.
    package static let sessionsPerToken = 20
    /// How long an ended session (expired, signed out or revoked) stays listed before it is deleted. Its audit
    /// records stay.
    package static let endedSessionRetention: TimeInterval = 7 * 86_400

    private let storage: TokenStore
    private let clock: ServerClock
    private let environmentHash: [UInt8]?
    /// Active tokens by the hex of their hash.
    private let active: Locked<[String: StoredToken]>
    /// Held by every change of the stored tokens together with `active`, and by `reload()`, so that a reload never
    /// swaps in a list read before a token this server just made or revoked. The value is the token revision of the
    /// store as last loaded (`TokenStore.revision()`), `nil` before the first load.
    private let changes = Locked<Int?>(nil)
    /// When tokens of the admin API were used since the store last recorded it, by name.
    private let uses = Locked<[String: Date]>([:])
    /// Bumped after every revocation, so that checks remembered per connection are made again.
    let generation = Atomic<Int>(0)
    /// Told the names of the tokens that stopped being valid, right after the generation moved (see `onRevoked`).
    private let revocationObservers = Locked<[@Sendable (Set<String>) -> Void]>([])

    /// Loads the active tokens; `environmentToken` (from `FLAGSERVER_ADMIN_TOKEN`) is accepted as an admin token.
    package init(tokens: TokenStore, clock: ServerClock, environmentToken: String?) throws {
        self.storage = tokens
        self.clock = clock
        self.environmentHash = environmentToken.flatMap { $0.isEmpty ? nil : SHA256.hash($0) }
        self.active = Locked([:])
        try reload()
    }

    /// Loads the active tokens from the store again, so that tokens another server sharing the store made or
    /// revoked count here too; does nothing when the store's token revision has not moved since the last load.
    package func reload() throws {
        try changes.withLock { loaded in
            let revision: Int
            let stored: [StoredToken]
            do {
                revision = try storage.revision()
                if revision == loaded { return }
                stored = try storage.all()
            } catch {
                throw ServiceError.storage(error)
            }
            var fresh: [String: StoredToken] = [:]
            for token in stored where token.revokedAt == nil { fresh[SHA256.hexString(token.hash)] = token }
            let gone = active.withLock { active in
                defer { active = fresh }
                return Set(active.filter { fresh[$0.key] == nil }.map(\.value.name))
            }
            loaded = revision
            stoppedWorking(gone)
        }
    }

    /// The principal of an `Authorization: Bearer …` header; 401 without one, for a token the server does not
    /// know (or has revoked), or for one that has expired.
    package func authenticate(_ authorization: String?) throws -> Principal {
        guard let authorization, !authorization.isEmpty else {
            throw ServiceError.unauthorized("missing Authorization header: send \"Authorization: Bearer TOKEN\"")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].utf8.count == 6 && parts[0].lowercased() == "bearer" else {
            throw ServiceError.unauthorized("the Authorization header must be \"Bearer TOKEN\"")
        }
        let presented = SHA256.hash(String(parts[1].trimmingHTTPSpaces()))
        if let environmentHash, constantTimeEquals(environmentHash, presented) {
            let name = Self.environmentTokenName
            return .admin(
                AdminCaller(name: name, token: name, role: .admin, sets: nil, isSession: false, expiresAt: nil))
        }
        let candidate = active.withLock { $0[SHA256.hexString(presented)] }
        guard let candidate, constantTimeEquals(candidate.hash, presented) else {
            throw ServiceError.unauthorized("unknown or revoked token")
        }
        let principal = Self.principal(of: candidate)
        try checkNotExpired(principal)
        noteUse(principal)
        return principal
    }

    /// 401 once `principal`'s token has expired.
    func checkNotExpired(_ principal: Principal) throws {
        guard let expiresAt = principal.expiresAt, clock.now() >= expiresAt else { return }
        throw ServiceError.unauthorized("the token expired at \(ISO8601.format(expiresAt)); ask an admin for a new one")
    }

    /// Remembers that a token of the admin API was used now; the store records it with `recordUses()`.
    func noteUse(_ principal: Principal) {
        guard case .admin(let caller) = principal, caller.token != Self.environmentTokenName else { return }
        let now = clock.wholeSecond()
        uses.withLock { $0[caller.token] = now }
    }

    /// Forgets the dashboard sessions that ended more than `endedSessionRetention` ago, here and in the store (the
    /// server calls this about once an hour). Returns how many the store deleted.
    @discardableResult
    package func pruneEndedSessions() throws -> Int {
        let cutoff = clock.now().addingTimeInterval(-Self.endedSessionRetention)
        // Revoked sessions left `active` when they were revoked; expired ones are kept there to be refused as
        // expired, with the time, until now.
        active.withLock { tokens in
            tokens = tokens.filter { $0.value.sessionOf == nil || ($0.value.expiresAt.map { $0 >= cutoff } ?? true) }
        }
        do {
            return try storage.deleteSessions(endedBefore: cutoff)
        } catch {
            throw ServiceError.storage(error)
        }
    }

    /// Stores the uses noted since the last call (the server calls this about once a minute, and when it stops).
    package func recordUses() throws {
        let noted = uses.withLock { uses in
            defer { uses = [:] }
            return uses
        }
        do {
            try storage.recordUses(noted)
        } catch {
            uses.withLock { uses in uses.merge(noted) { max($0, $1) } }
            throw ServiceError.storage(error)
        }
    }

    private static func principal(of token: StoredToken) -> Principal {
        switch token.role {
        case .admin(let role, let sets):
            .admin(
                AdminCaller(
                    name: token.sessionOf ?? token.name, token: token.name, role: role, sets: sets.map(Set.init),
                    isSession: token.sessionOf != nil, expiresAt: token.expiresAt))
        case .sdk(let set): .sdk(name: token.name, set: set)
        }
    }

    /// Whether an unlimited `admin` token other than the environment's is active (a session does not count).
    package var hasStoredAdminToken: Bool {
        active.withLock { tokens in
            tokens.values.contains { $0.role == .admin(.admin, sets: nil) && $0.sessionOf == nil }
        }
    }

    /// Issues a token: 256 random bits, shown to the caller once and stored only as a hash.
    ///
    /// - Returns: the token text (`fsa_…` for tokens of the admin API, `fss_…` for SDK keys) and its stored record.
    package func issue(
        name: String, role: TokenRole, expiresAt: Date? = nil, note: ChangeNote
    ) throws -> (token: String, record: StoredToken) {
        guard isValidKey(name) else {
            throw ServiceError.badRequest(
                "token name \"\(name)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "name")
        }
        guard name != Self.environmentTokenName else {
            throw ServiceError.badRequest(
                "the name \"\(name)\" is the audit log's name for FLAGSERVER_ADMIN_TOKEN; choose another", path: "name")
        }
        if case .admin(_, let sets?) = role {
            guard !sets.isEmpty else {
                throw ServiceError.badRequest("\"sets\" must name at least one set, or be left out", path: "sets")
            }
            for set in sets where !isValidKey(set) {
                throw ServiceError.badRequest("\"\(set)\" is not a set name", path: "sets")
            }
        }
        if let expiresAt, expiresAt <= clock.now() {
            throw ServiceError.badRequest("the expiry \(ISO8601.format(expiresAt)) has passed already", path: "expires")
        }
        if try storage.all().contains(where: { $0.name == name }) {
            throw ServiceError.alreadyExists(
                "a token named \"\(name)\" exists (names are never reused)", subject: role.isSDKKey ? .key : .token)
        }
        let token = Self.generate(prefix: Self.prefix(of: role))
        return (token, try save(token: token, name: name, role: role, expiresAt: expiresAt, note: note))
    }

    /// A dashboard session for `caller`: a token of the same role and sets, acting under the caller's name, that
    /// expires in 12 hours (or when the caller's token does, if sooner) and is revoked with it. A token has at most
    /// `sessionsPerToken` active sessions: beyond that the oldest is signed out (audited as `session.evict`), so that
    /// sessions cannot pile up in memory.
    package func startSession(for caller: AdminCaller, note: ChangeNote) throws -> (token: String, record: StoredToken)
    {
        guard !caller.isSession else {
            throw ServiceError.forbidden("a session cannot start another session: sign in with your own token")
        }
        let now = clock.now()
        let sessions = active.withLock { tokens in
            tokens.values.filter { $0.sessionOf == caller.token && ($0.expiresAt.map { $0 > now } ?? true) }
        }
        for oldest in sessions.sorted(by: { ($0.createdAt, $0.name) < ($1.createdAt, $1.name) })
            .prefix(max(0, sessions.count - Self.sessionsPerToken + 1))
        {
            try revoke(
                name: oldest.name, set: nil,
                note: ChangeNote(
                    actor: caller.name, action: "session.evict",
                    reason: "more than \(Self.sessionsPerToken) sessions: the oldest is signed out"))
        }
        var expiresAt = clock.wholeSecond().addingTimeInterval(Self.sessionLifetime)
        if let end = caller.expiresAt { expiresAt = min(expiresAt, end) }
        let token = Self.generate(prefix: "fsa_")
        let name = String(Self.generate(prefix: "session-").prefix(24))
        let record = try save(
            token: token, name: name, role: .admin(caller.role, sets: caller.sets?.sorted()), expiresAt: expiresAt,
            sessionOf: caller.token, note: note)
        return (token, record)
    }

    /// Stores the hash of `token`, already generated, under `name`, atomically with its audit record.
    @discardableResult
    func save(
        token: String, name: String, role: TokenRole, expiresAt: Date? = nil, sessionOf: String? = nil,
        note: ChangeNote
    ) throws -> StoredToken {
        let now = clock.wholeSecond()
        let record = StoredToken(
            name: name, hash: SHA256.hash(token), role: role, createdAt: now, expiresAt: expiresAt,
            sessionOf: sessionOf)
        let audit = AuditEntry(time: now, actor: note.actor, action: note.action, subject: name, reason: note.reason)
        try changes.withLock { _ in
            do {
                try storage.add(record, audit: audit)
            } catch {
                throw ServiceError.storage(error)
            }
            active.withLock { $0[SHA256.hexString(record.hash)] = record }
        }
        return record
    }

    /// Every token: SDK keys of one set (`set` given), or all tokens, with their latest uses.
    package func tokens(set: String?) throws -> [StoredToken] {
        var all: [StoredToken]
        do {
            all = try storage.all()
        } catch {
            throw ServiceError.storage(error)
        }
        let noted = uses.withLock { $0 }
        for index in all.indices {
            if let used = noted[all[index].name] { all[index].lastUsedAt = max(all[index].lastUsedAt ?? used, used) }
        }
        guard let set else { return all }
        return all.filter { $0.role == .sdk(set: set) }
    }

    /// Revokes a token, and the dashboard sessions made from it, at once; 404 when there is no active token of that
    /// name (an SDK key of `set`, if given).
    package func revoke(name: String, set: String?, note: ChangeNote) throws {
        let matches = try tokens(set: set).contains { $0.name == name && $0.revokedAt == nil }
        guard matches else {
            throw ServiceError.notFound(
                "no active key \"\(name)\"" + (set.map { " for flag set \"\($0)\"" } ?? ""),
                subject: set == nil ? .token : .key)
        }
        let now = clock.wholeSecond()
        let audit = AuditEntry(time: now, actor: note.actor, action: note.action, subject: name, reason: note.reason)
        try changes.withLock { _ in
            let revoked: Bool
            do {
                revoked = try storage.revoke(name: name, at: now, audit: audit)
            } catch {
                throw ServiceError.storage(error)
            }
            guard revoked else {
                throw ServiceError.notFound("no active key \"\(name)\"", subject: set == nil ? .token : .key)
            }
            let gone = active.withLock { tokens in
                let gone = tokens.values.filter { $0.name == name || $0.sessionOf == name }.map(\.name)
                tokens = tokens.filter { $0.value.name != name && $0.value.sessionOf != name }
                return Set(gone)
            }
            stoppedWorking(gone)
        }
    }

    /// Calls `observer` with the names of the tokens that stop being valid (revoked here or by another server
    /// sharing the store, sessions of a revoked token included), right after they stopped working here. It runs on
    /// the revoking thread, before the revocation returns, so that nothing done after a revocation can still count
    /// on the token: it must be quick and must not call back into the authority.
    package func onRevoked(_ observer: @escaping @Sendable (Set<String>) -> Void) {
        revocationObservers.withLock { $0.append(observer) }
    }

    /// Whether the token named `name` is active here (neither revoked nor unknown; it may have expired). The
    /// environment token always is.
    package func isActive(name: String) -> Bool {
        name == Self.environmentTokenName && environmentHash != nil
            || active.withLock { $0.values.contains { $0.name == name } }
    }

    /// Bumps the generation and tells the observers, once tokens named `names` have left `active`.
    private func stoppedWorking(_ names: Set<String>) {
        guard !names.isEmpty else { return }
        // After the removal: a check that reads the new generation also sees the tokens gone.
        generation.add(1, ordering: .releasing)
        for observer in revocationObservers.withLock({ $0 }) { observer(names) }
    }

    /// `fsa_` for every token of the admin API (whatever its role: a token's text says nothing of its power).
    private static func prefix(of role: TokenRole) -> String {
        if case .sdk = role { return "fss_" }
        return "fsa_"
    }

    /// A new token: a prefix and 256 bits from the system's cryptographic generator, as 64 hex digits.
    static func generate(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            for shift in stride(from: 0, to: 64, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return prefix + SHA256.hexString(bytes)
    }
}
