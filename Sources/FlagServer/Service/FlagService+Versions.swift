import FlagAPI
import FlagCore
import Foundation

/// One item's bytes at two versions, for a diff; `nil` where the item does not exist.
package struct ItemVersions: Sendable {
    /// The flag or cohort.
    package var item: ItemKey
    /// Its canonical bytes at the older version.
    package var before: [UInt8]?
    /// Its canonical bytes at the newer version.
    package var after: [UInt8]?
}

/// Reading old versions: documents, history, diffs, and rolling back.
extension FlagService {
    /// The document of any stored version, assembled from its items' stored bytes (no decoding).
    package func document(_ set: String, version: Int) throws -> [UInt8] {
        if let current = state(set), current.version == version { return try servedDocument(set).bytes }
        let snapshot = try storeCall { try store.snapshot(set: set, version: version) }
        var flags: [String: [UInt8]] = [:]
        var cohorts: [String: [UInt8]] = [:]
        for (item, bytes) in snapshot.items {
            switch item.kind {
            case .flag: flags[item.key] = bytes
            case .cohort: cohorts[item.key] = bytes
            }
        }
        return FlagSet.assemble(
            name: set, version: snapshot.version, updatedAt: snapshot.createdAt, cohorts: cohorts, flags: flags)
    }

    /// The set's versions, newest first; with `subject`, only those touching that flag or cohort.
    package func history(_ set: String, subject: String?, limit: Int) throws -> [VersionInfo] {
        _ = try requireState(set)
        return try storeCall { try store.history(set: set, subject: subject, limit: limit) }
    }

    /// The items that differ between two versions, sorted (cohorts, then flags, by key).
    package func diff(_ set: String, from: Int, to: Int) throws -> [ItemVersions] {
        let current = try requireState(set)
        for version in [from, to] where version < 1 || version > current.version {
            throw ServiceError.notFound(
                "flag set \"\(set)\" has no version \(version)", path: "version", subject: .version)
        }
        let old = try storeCall { try store.snapshot(set: set, version: from) }.items
        let new = try storeCall { try store.snapshot(set: set, version: to) }.items
        return Set(old.keys).union(new.keys).sorted().compactMap { item in
            old[item] == new[item] ? nil : ItemVersions(item: item, before: old[item], after: new[item])
        }
    }

    /// The items that differ between the current versions of `set` (`before`) and `other` (`after`), sorted.
    package func diff(_ set: String, with other: String) throws -> [ItemVersions] {
        let (mine, theirs) = (try requireState(set).items, try requireState(other).items)
        return Set(mine.keys).union(theirs.keys).sorted().compactMap { item in
            mine[item] == theirs[item] ? nil : ItemVersions(item: item, before: mine[item], after: theirs[item])
        }
    }

    /// Makes a new version whose flags and cohorts are those of `version`: history is never rewritten.
    @discardableResult
    package func rollback(_ set: String, to version: Int, ifMatch: Int?, note: ChangeNote) throws -> WriteResult {
        let current = try requireState(set)
        guard version >= 1, version <= current.version else {
            throw ServiceError.notFound(
                "flag set \"\(set)\" has no version \(version)", path: "version", subject: .version)
        }
        let snapshot = try storeCall { try store.snapshot(set: set, version: version) }
        let old = try storeCall { try Self.flagSet(of: snapshot) }
        return try replace(set, with: old, ifMatch: ifMatch, note: note)
    }

    /// Audit records, newest first: one set's or the whole log.
    package func audit(_ set: String?, filter: AuditFilter = AuditFilter(), limit: Int) throws -> [AuditEntry] {
        if let set { _ = try requireState(set) }
        return try storeCall { try store.auditLog.records(set: set, filter: filter, limit: limit) }
    }

    /// Runs a store call, turning its errors into `ServiceError`s.
    func storeCall<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError.storage(error)
        }
    }
}
