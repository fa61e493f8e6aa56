import FlagCore
import FlagLock
import Foundation
import Synchronization

/// Who a request's token says it comes from.
public enum Principal: Sendable, Hashable {
    /// An admin token: may do everything. `name` is the audit actor.
    case admin(name: String)
    /// An SDK key: may read one set.
    case sdk(name: String, set: String)

    /// The token's name, the actor in the audit log.
    public var name: String {
        switch self {
        case .admin(let name), .sdk(let name, _): name
        }
    }

    /// Whether the principal may read `set`.
    public func mayRead(_ set: String) -> Bool {
        switch self {
        case .admin: true
        case .sdk(_, let own): own == set
        }
    }
}

/// Checks bearer tokens and issues new ones. Tokens are kept only as SHA-256 hashes; a presented token is hashed,
/// looked up by hash, and compared in constant time. No token ever reaches a log line or an error message.
public final class TokenAuthority: Sendable {
    /// The name `FLAGSERVER_ADMIN_TOKEN` acts under in the audit log.
    public static let environmentTokenName = "env"

    private let store: any FlagStore
    private let clock: ServerClock
    private let environmentHash: [UInt8]?
    /// Active tokens by the hex of their hash.
    private let active: Locked<[String: StoredToken]>
    /// Bumped after every revocation, so that checks remembered per connection are made again.
    let generation = Atomic<Int>(0)

    /// Loads the active tokens; `environmentToken` (from `FLAGSERVER_ADMIN_TOKEN`) is accepted as an admin token.
    public init(store: any FlagStore, clock: ServerClock, environmentToken: String?) throws {
        self.store = store
        self.clock = clock
        self.environmentHash = environmentToken.flatMap { $0.isEmpty ? nil : SHA256.hash($0) }
        var active: [String: StoredToken] = [:]
        for token in try store.tokens() where token.revokedAt == nil { active[SHA256.hexString(token.hash)] = token }
        self.active = Locked(active)
    }

    /// The principal of an `Authorization: Bearer …` header; 401 without one or for a token the server does not
    /// know (or has revoked).
    public func authenticate(_ authorization: String?) throws -> Principal {
        guard let authorization, !authorization.isEmpty else {
            throw ServiceError.unauthorized("missing Authorization header: send \"Authorization: Bearer TOKEN\"")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].utf8.count == 6 && parts[0].lowercased() == "bearer" else {
            throw ServiceError.unauthorized("the Authorization header must be \"Bearer TOKEN\"")
        }
        let presented = SHA256.hash(String(parts[1].trimmingHTTPSpaces()))
        if let environmentHash, constantTimeEquals(environmentHash, presented) {
            return .admin(name: Self.environmentTokenName)
        }
        let candidate = active.withLock { $0[SHA256.hexString(presented)] }
        guard let candidate, constantTimeEquals(candidate.hash, presented) else {
            throw ServiceError.unauthorized("unknown or revoked token")
        }
        switch candidate.role {
        case .admin: return .admin(name: candidate.name)
        case .sdk(let set): return .sdk(name: candidate.name, set: set)
        }
    }

    /// Whether an admin token other than the environment's is active.
    public var hasStoredAdminToken: Bool {
        active.withLock { tokens in tokens.values.contains { $0.role == .admin } }
    }

    /// Issues a token: 256 random bits, shown to the caller once and stored only as a hash.
    ///
    /// - Returns: the token text (`fsa_…` for admin tokens, `fss_…` for SDK keys) and its stored record.
    public func issue(name: String, role: TokenRole, note: ChangeNote) throws -> (token: String, record: StoredToken) {
        guard isValidKey(name) else {
            throw ServiceError.badRequest(
                "token name \"\(name)\" must match ^[a-z0-9][a-z0-9._-]{0,127}$", path: "name")
        }
        if try store.tokens().contains(where: { $0.name == name }) {
            throw ServiceError.alreadyExists("a token named \"\(name)\" exists (names are never reused)")
        }
        let token = Self.generate(prefix: role == .admin ? "fsa_" : "fss_")
        return (token, try save(token: token, name: name, role: role, note: note))
    }

    /// Stores the hash of `token`, already generated, under `name`, atomically with its audit record.
    @discardableResult
    func save(token: String, name: String, role: TokenRole, note: ChangeNote) throws -> StoredToken {
        let now = clock.wholeSecond()
        let record = StoredToken(name: name, hash: SHA256.hash(token), role: role, createdAt: now)
        let audit = AuditRecord(actor: note.actor, action: note.action, reason: note.reason, subject: name, time: now)
        do {
            try store.addToken(record, audit: audit)
        } catch {
            throw ServiceError.storage(error)
        }
        active.withLock { $0[SHA256.hexString(record.hash)] = record }
        return record
    }

    /// Every token of a role filter: SDK keys of one set (`set` given), or all tokens.
    public func tokens(set: String?) throws -> [StoredToken] {
        let all: [StoredToken]
        do {
            all = try store.tokens()
        } catch {
            throw ServiceError.storage(error)
        }
        guard let set else { return all }
        return all.filter { $0.role == .sdk(set: set) }
    }

    /// Revokes a token at once; 404 when there is no active token of that name (of `set`, if given).
    public func revoke(name: String, set: String?, note: ChangeNote) throws {
        let matches = try tokens(set: set).contains { $0.name == name && $0.revokedAt == nil }
        guard matches else {
            throw ServiceError.notFound("no active key \"\(name)\"" + (set.map { " for flag set \"\($0)\"" } ?? ""))
        }
        let now = clock.wholeSecond()
        let audit = AuditRecord(actor: note.actor, action: note.action, reason: note.reason, subject: name, time: now)
        let revoked: Bool
        do {
            revoked = try store.revokeToken(name: name, at: now, audit: audit)
        } catch {
            throw ServiceError.storage(error)
        }
        guard revoked else { throw ServiceError.notFound("no active key \"\(name)\"") }
        active.withLock { tokens in tokens = tokens.filter { $0.value.name != name } }
        // After the removal: a check that reads the new generation also sees the token gone.
        generation.add(1, ordering: .releasing)
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
