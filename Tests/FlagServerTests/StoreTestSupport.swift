import FlagServer
import Foundation

/// The two stores: every contract test runs against both, so the protocol says nothing only SQLite does.
enum StoreKind: String, CaseIterable, Sendable {
    case sqliteFile
    case inMemory

    func make(in directory: URL) throws -> any FlagStore {
        switch self {
        case .sqliteFile: try SQLiteFlagStore(path: directory.appendingPathComponent("flags.sqlite").path)
        case .inMemory: InMemoryFlagStore()
        }
    }
}

/// Fixed times, one per step, so that stored times compare exactly.
func time(_ step: Int) -> Date {
    Date(timeIntervalSince1970: 1_800_000_000 + Double(step) * 60)
}

/// Bytes standing in for an item's canonical JSON.
func body(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// An audit record by `alice` at step `step`.
func audit(_ action: String, _ step: Int, subject: String? = nil, reason: String? = nil) -> AuditRecord {
    AuditRecord(actor: "alice", action: action, reason: reason, subject: subject, time: time(step))
}

/// A stand-in document digest for version `version`, distinct per version.
func digest(_ version: Int) -> [UInt8] {
    Array(repeating: UInt8(version), count: 32)
}
