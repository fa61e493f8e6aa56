import FlagCore
import Foundation

/// Why a document or a patch from the server was not used. The set in use stays.
struct DocumentRejected: Error, Sendable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

enum Documents {
    /// Decodes and validates a whole document for `set`: it must be JSON, name the set, have a version, and have no
    /// problem unless it was written with a newer schema (whose unknown constructs fall back per flag, SPEC §2).
    static func validate(_ bytes: [UInt8], set: String) throws(DocumentRejected) -> CompiledFlagSet {
        let decoded: FlagSet
        do {
            decoded = try FlagSet.decode(bytes)
        } catch {
            throw DocumentRejected(message: "the document is not valid JSON: \(error)")
        }
        guard decoded.name == set else {
            throw DocumentRejected(message: "the document is for set '\(decoded.name)', not '\(set)'")
        }
        guard decoded.version >= 1 else {
            throw DocumentRejected(message: "the document has no version (found \(decoded.version))")
        }
        let compiled = CompiledFlagSet(decoded, sessionSlots: FlagSlots.slot)
        if decoded.schema <= FlagSet.currentSchema, let problem = compiled.problems.first {
            throw DocumentRejected(
                message:
                    "the document v\(decoded.version) is invalid (\(compiled.problems.count) problems), first: \(problem)"
            )
        }
        return compiled
    }
}

/// A `patch` event (SPEC §4) as the client applies it: a `SetPatch` from `base` to `version`, its changed flags and
/// cohorts read.
struct FlagPatch: Sendable {
    var version: Int
    var base: Int
    /// The changed flags and cohorts, read like a document (unreadable items listed as in a document).
    var changes: FlagSet
    var removedFlags: Set<String>
    var removedCohorts: Set<String>

    /// Reads a patch's JSON (`SetPatch`), then its items.
    static func decode(_ bytes: [UInt8]) throws(DocumentRejected) -> FlagPatch {
        let patch: SetPatch
        do {
            patch = try SetPatch.decode(bytes)
        } catch {
            throw DocumentRejected(message: error.description)
        }
        return FlagPatch(patch)
    }

    /// Whether the patch touches cohorts, which may change flags it does not list.
    var changesCohorts: Bool {
        !changes.cohorts.isEmpty || !changes.unreadableCohorts.isEmpty || !removedCohorts.isEmpty
    }

    /// The keys of the flags the patch changes or removes.
    var touchedFlags: Set<String> {
        Set(changes.flags.keys).union(changes.unreadableFlags.keys).union(removedFlags)
    }

    /// `model` with the patch applied.
    func applied(to model: FlagSet) -> FlagSet {
        var result = model
        result.version = version
        for key in removedFlags {
            result.flags[key] = nil
            result.unreadableFlags[key] = nil
        }
        for (key, flag) in changes.flags {
            result.flags[key] = flag
            result.unreadableFlags[key] = nil
        }
        for (key, problems) in changes.unreadableFlags {
            result.flags[key] = nil
            result.unreadableFlags[key] = problems
        }
        result.applyCohorts(of: changes, removing: removedCohorts)
        return result
    }

    /// The changed flags compiled with every cohort of `model` (the set after the patch), to evaluate over the
    /// previous source while the whole set compiles; throws when they have problems.
    func overlay(on model: FlagSet) throws(DocumentRejected) -> CompiledFlagSet {
        var set = FlagSet(name: model.name, version: version, updatedAt: model.updatedAt, schema: model.schema)
        set.cohorts = model.cohorts
        set.unreadableCohorts = model.unreadableCohorts
        // With the flags they require, unchanged or not: a changed flag's prerequisites are evaluated in the overlay.
        set.add(touchedFlags) { key, set in
            set.flags[key] = model.flags[key]
            set.unreadableFlags[key] = model.unreadableFlags[key]
        }
        let compiled = CompiledFlagSet(set, sessionSlots: FlagSlots.slot)
        if model.schema <= FlagSet.currentSchema, let problem = compiled.problems.first {
            throw DocumentRejected(message: "patch v\(version) makes the set invalid: \(problem)")
        }
        return compiled
    }
}

extension FlagSet {
    /// Adds the flags `keys` name, and then the flags they require, transitively, each with `read` (which puts it in
    /// `flags`, or its problems in `unreadableFlags`, or nothing for a flag the set lacks): what a set compiled for
    /// some flags alone must hold, so that their prerequisites are evaluated in it as in the whole set.
    mutating func add(_ keys: some Sequence<String>, _ read: (String, inout FlagSet) -> Void) {
        var pending = Array(keys)
        var added: Set<String> = []
        while let key = pending.popLast() {
            guard added.insert(key).inserted else { continue }
            read(key, &self)
            pending += flags[key]?.prerequisites.map(\.flag) ?? []
        }
    }
}

extension FlagPatch {
    /// The patch `patch` read, its items decoded.
    init(_ patch: SetPatch) {
        self.init(
            version: patch.version, base: patch.base, changes: patch.changes(), removedFlags: patch.removedFlags,
            removedCohorts: patch.removedCohorts)
    }
}

/// Reads an HTTP `Date` (IMF-fixdate, RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`.
func parseHTTPDate(_ text: String) -> Date? {
    let parts = text.split(separator: " ")
    guard parts.count == 6, parts[5] == "GMT", parts[1].count == 2, parts[3].count == 4, parts[4].count == 8 else {
        return nil
    }
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    guard let month = months.firstIndex(of: String(parts[2])) else { return nil }
    let monthText = month + 1 < 10 ? "0\(month + 1)" : "\(month + 1)"
    return ISO8601.parse("\(parts[3])-\(monthText)-\(parts[1])T\(parts[4])Z")
}

extension FlagSet {
    /// A patch's cohorts applied: those `removed` go, and each cohort of `changes`, readable or not, takes the place
    /// of the one of its name.
    mutating func applyCohorts(of changes: FlagSet, removing removed: Set<String>) {
        for name in removed {
            cohorts[name] = nil
            unreadableCohorts[name] = nil
        }
        for (name, cohort) in changes.cohorts {
            cohorts[name] = cohort
            unreadableCohorts[name] = nil
        }
        for (name, problems) in changes.unreadableCohorts {
            cohorts[name] = nil
            unreadableCohorts[name] = problems
        }
    }
}
