/// Why a `FlagStore` call failed.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case notFound(set: String, version: Int?)
        case conflict(current: Int)
        case alreadyExists
        case corrupt(details: String)
        case unavailable
        case underlying
        case proposalMoved
    }

    private let code: Code
    /// What went wrong and, where there is one, what to do about it.
    package let message: String
    /// The error of the storage engine that caused this one, if any.
    package let underlying: (any Error)?

    private init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// No set of that name, or no such version of it.
    package static func notFound(set: String, version: Int? = nil) -> StoreError {
        let message = version.map { "flag set \"\(set)\" has no version \($0)" } ?? "no flag set \"\(set)\""
        return StoreError(.notFound(set: set, version: version), message)
    }

    /// The write was based on a version that is no longer current.
    package static func conflict(set: String, base: Int, current: Int) -> StoreError {
        StoreError(
            .conflict(current: current),
            "flag set \"\(set)\" is at version \(current), not \(base): fetch it again and reapply the change"
        )
    }

    /// Something of that name already exists.
    package static func alreadyExists(_ what: String) -> StoreError {
        StoreError(.alreadyExists, "\(what) already exists")
    }

    /// The stored data is damaged; `message` says how to restore it.
    package static func corrupt(_ message: String, underlying: (any Error)? = nil) -> StoreError {
        StoreError(.corrupt(details: message), message, underlying: underlying)
    }

    /// The database cannot be reached (down, restarting, the network cut): the same call may work later.
    ///
    /// - Parameters:
    ///   - database: the database as a URI without its password.
    ///   - reason: the error, naming what failed.
    package static func unavailable(database: String, reason: String, underlying: (any Error)? = nil) -> StoreError {
        StoreError(.unavailable, "the database \(database) is unavailable: \(reason)", underlying: underlying)
    }

    /// A version was to apply a change request that is no longer in the state it was read in: someone decided on it,
    /// or another server applied it, first. Nothing was stored.
    package static func proposalMoved(id: Int) -> StoreError {
        StoreError(.proposalMoved, "change request \(id) was decided on meanwhile, or applied by another server")
    }

    /// Whether a version was refused because its change request moved on first (`proposalMoved`).
    package var isProposalMoved: Bool {
        if case .proposalMoved = code { return true }
        return false
    }

    /// The storage engine failed (I/O, a lock held too long, a full disk).
    package static func underlying(_ error: any Error, while action: String) -> StoreError {
        StoreError(.underlying, "storage failed while \(action): \(error)", underlying: error)
    }

    /// Whether no set or version of that name exists.
    package var isNotFound: Bool {
        if case .notFound = code { return true }
        return false
    }

    /// Whether the set exists and the version does not.
    package var isMissingVersion: Bool {
        if case .notFound(_, let version) = code { return version != nil }
        return false
    }

    /// Whether the write lost a race: see `currentVersion`.
    package var isConflict: Bool { currentVersion != nil }

    /// The set's current version, for a conflict.
    package var currentVersion: Int? {
        if case .conflict(let current) = code { return current }
        return nil
    }

    /// Whether a set or token of that name already exists.
    package var isAlreadyExists: Bool {
        if case .alreadyExists = code { return true }
        return false
    }

    /// Whether the database could not be reached: retrying later may work.
    package var isUnavailable: Bool {
        if case .unavailable = code { return true }
        return false
    }

    /// Whether the stored data is damaged.
    package var isCorrupt: Bool {
        if case .corrupt = code { return true }
        return false
    }

    package var description: String { message }
}
