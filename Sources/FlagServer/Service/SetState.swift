import FlagCore
import FlagHTTP
import Foundation

/// Where the server's logic gets the time from: the system clock in production, a fixed one in tests.
public struct ServerClock: Sendable {
    /// The current time.
    public var now: @Sendable () -> Date

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's wall clock.
    public static var system: ServerClock { ServerClock { Date() } }

    /// The current time cut to whole seconds, as documents and audit records carry it, so that a document rebuilt
    /// from the store is byte for byte the one served.
    func wholeSecond() -> Date {
        Date(timeIntervalSince1970: now().timeIntervalSince1970.rounded(.down))
    }
}

/// One version of a set as served: compiled for evaluation, its canonical document encoded once, and each
/// item's canonical bytes (to tell what a write changed). Immutable, shared by every reader.
public final class SetState: Sendable {
    /// The set compiled for evaluation; `compiled.flagSet` is the model.
    public let compiled: CompiledFlagSet
    /// The canonical compact document, built once per version.
    public let document: [UInt8]
    /// Every flag's and cohort's canonical bytes.
    public let items: [ItemKey: [UInt8]]
    /// SHA-256 of `document`.
    public let digest: [UInt8]
    /// `GET /v1/sets/{set}`'s 200 for this version, its head encoded once: every client asking shares it.
    let documentResponse: HTTPResponse
    /// The 304 for this version, encoded once.
    let notModifiedResponse: HTTPResponse
    /// The version this state serves, kept apart from `compiled.flagSet`: reading it through the model copied the
    /// whole `FlagSet` struct (a retain and release per field) on every conditional request.
    public let version: Int

    init(compiled: CompiledFlagSet, items: [ItemKey: [UInt8]]) {
        let set = compiled.flagSet
        var flags: [String: [UInt8]] = [:]
        var cohorts: [String: [UInt8]] = [:]
        for (item, bytes) in items {
            switch item.kind {
            case .flag: flags[item.key] = bytes
            case .cohort: cohorts[item.key] = bytes
            }
        }
        self.compiled = compiled
        self.items = items
        self.version = set.version
        self.document = FlagSet.assemble(
            schema: set.schema, name: set.name, version: set.version, updatedAt: set.updatedAt, cohorts: cohorts,
            flags: flags)
        self.digest = SHA256.hash(document)
        let etag = "\"\(set.version)\""
        documentResponse = .prepared(
            status: 200,
            headers: [
                "Content-Type": "application/json; charset=utf-8", "ETag": etag, "Cache-Control": "no-cache",
            ],
            body: document)
        notModifiedResponse = .prepared(status: 304, headers: ["ETag": etag, "Cache-Control": "no-cache"])
    }

    /// A state for a valid set, encoding each item.
    convenience init(compiled: CompiledFlagSet) {
        self.init(compiled: compiled, items: Self.items(of: compiled.flagSet))
    }

    /// The set's name.
    public var name: String { compiled.flagSet.name }
    /// The model.
    public var flagSet: FlagSet { compiled.flagSet }
    /// The `ETag` of this version: `"{version}"`.
    public var etag: String { "\"\(version)\"" }

    /// Each flag's and cohort's canonical bytes.
    static func items(of set: FlagSet) -> [ItemKey: [UInt8]] {
        var items: [ItemKey: [UInt8]] = [:]
        items.reserveCapacity(set.flags.count + set.cohorts.count)
        for (key, flag) in set.flags { items[.flag(key)] = flag.encoded() }
        for (name, cohort) in set.cohorts { items[.cohort(name)] = cohort.encoded() }
        return items
    }

    /// What differs from `old` to `new`: new bytes for added or changed items, `nil` for removed ones.
    static func change(from old: [ItemKey: [UInt8]], to new: [ItemKey: [UInt8]]) -> [ItemKey: [UInt8]?] {
        var change: [ItemKey: [UInt8]?] = [:]
        for (item, bytes) in new where old[item] != bytes { change[item] = .some(bytes) }
        for item in old.keys where new[item] == nil { change[item] = .some(nil) }
        return change
    }
}

/// A new version of a set as subscribers see it: the new state and what changed, encoded once for everyone.
public struct SetUpdate: Sendable {
    /// The state after the change.
    public let state: SetState
    /// What changed over the version before: the changed items' canonical bytes and the removed names.
    public let patch: SetPatch
    /// `patch` encoded (SPEC §4), built once per version.
    public let encodedPatch: [UInt8]
    /// The whole Server-Sent Events frame for the patch, written as is to every stream.
    public let patchEvent: [UInt8]

    /// The update to `state` from `base`; `changed` maps each changed item to its new bytes, or `nil` if removed.
    init(state: SetState, base: Int, changed: [ItemKey: [UInt8]?]) {
        self.state = state
        self.patch = SetPatch(version: state.version, base: base, changed: changed)
        self.encodedPatch = patch.encoded()
        self.patchEvent = ServerSentEvent.frame(
            event: SetStreamEvent.patch.rawValue, id: String(state.version), data: encodedPatch)
    }

    /// The version the change was made on.
    public var base: Int { patch.base }
}

extension SetPatch {
    /// The patch of a change of stored items: its cost is the change's, not the set's.
    init(version: Int, base: Int, changed: [ItemKey: [UInt8]?]) {
        self.init(version: version, base: base)
        for (item, bytes) in changed {
            switch (item.kind, bytes) {
            case (.flag, let bytes?): flags[item.key] = bytes
            case (.flag, nil): removedFlags.insert(item.key)
            case (.cohort, let bytes?): cohorts[item.key] = bytes
            case (.cohort, nil): removedCohorts.insert(item.key)
            }
        }
    }
}

/// Server-Sent Events framing (the WHATWG `text/event-stream` format).
public enum ServerSentEvent {
    /// One event: `event:`, `id:` and one `data:` line (the JSON documents carry no raw line breaks), then a blank
    /// line.
    public static func frame(event: String, id: String, data: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(data.count + event.utf8.count + id.utf8.count + 24)
        frame += Array("event: \(event)\nid: \(id)\ndata: ".utf8)
        frame += data
        frame += [0x0A, 0x0A]
        return frame
    }

    /// A comment line that keeps proxies and clients from timing the stream out.
    public static let heartbeat: [UInt8] = Array(": heartbeat\n\n".utf8)

    /// The comment sent on connect instead of a `put` when `Last-Event-ID` is the current version. Without it the
    /// client could not tell "nothing newer" from "the put is still on its way", and would either call a stale cached
    /// set live (its `ready` answering before the newer set arrives) or wait for the first heartbeat.
    public static let current: [UInt8] = Array(": current\n\n".utf8)
}
