import Foundation

extension FlagSet {
    /// Reads a flag-set document leniently (SPEC §3).
    ///
    /// Unknown fields are ignored and unknown enum values kept. A field of the wrong shape inside one flag or
    /// cohort makes only that item unreadable (listed in `unreadableFlags` / `unreadableCohorts` and
    /// `readProblems`); every other item keeps working.
    /// - Throws: `JSONError` (with line and column) for malformed JSON or a document that is not an object.
    public static func decode(_ bytes: [UInt8]) throws -> FlagSet {
        try JSONReader.read(bytes) { reader in
            guard try reader.peek() == .object else {
                throw reader.error("a flag set must be a JSON object, found \(try reader.peek().described)")
            }
            var wire = WireReader()
            var set = FlagSet(name: "", schema: 1)
            var sawSchema = false
            var itemProblems: [Problem] = []
            try reader.readObject { reader, field in
                switch field {
                case "schema":
                    sawSchema = true
                    set.schema = try wire.int(&reader, "schema") ?? FlagSet.currentSchema
                case "set": set.name = try wire.string(&reader, "set") ?? ""
                case "version": set.version = try wire.int(&reader, "version") ?? 0
                case "updatedAt": set.updatedAt = try wire.date(&reader, "updatedAt")
                case "cohorts":
                    try wire.members(&reader, "cohorts") { reader, name in
                        try readItem(
                            &reader, kind: "cohort", key: name, into: &set.cohorts, unreadable: &set.unreadableCohorts,
                            problems: &itemProblems
                        ) { wire, reader, path in try wire.cohort(&reader, path) }
                    }
                case "flags":
                    try wire.members(&reader, "flags") { reader, key in
                        try readItem(
                            &reader, kind: "flag", key: key, into: &set.flags, unreadable: &set.unreadableFlags,
                            problems: &itemProblems
                        ) { wire, reader, path in try wire.flag(&reader, key: key, path) }
                    }
                default: try reader.skipValue()
                }
            }
            if !sawSchema { wire.problem("schema", "missing; this build writes schema \(FlagSet.currentSchema)") }
            set.readProblems = wire.problems + itemProblems
            return set
        }
    }
}

extension FlagSet {
    /// Reads one flag given as its own JSON object (a patch's item) as `decode` reads a member of `flags`: into
    /// `flags`, or into `unreadableFlags` with problems whose paths start at the document's root.
    mutating func readFlag(_ key: String, from bytes: [UInt8]) {
        readProblems += readAlone(kind: "flag", key: key, bytes, into: &flags, unreadable: &unreadableFlags) {
            wire, reader, path in try wire.flag(&reader, key: key, path)
        }
    }

    /// Reads one cohort given as its own JSON object, as `decode` reads a member of `cohorts`.
    mutating func readCohort(_ name: String, from bytes: [UInt8]) {
        readProblems += readAlone(kind: "cohort", key: name, bytes, into: &cohorts, unreadable: &unreadableCohorts) {
            wire, reader, path in try wire.cohort(&reader, path)
        }
    }
}

/// Reads one item given as its own JSON as `readItem` reads it inside a document; returns its problems.
private func readAlone<Item>(
    kind: String, key: String, _ bytes: [UInt8], into items: inout [String: Item],
    unreadable: inout [String: [Problem]], _ read: (inout WireReader, inout JSONReader, String) throws -> Item?
) -> [Problem] {
    var problems: [Problem] = []
    do {
        try JSONReader.read(bytes) { reader in
            try readItem(
                &reader, kind: kind, key: key, into: &items, unreadable: &unreadable, problems: &problems, read)
        }
    } catch {
        let problem = Problem(path: "\(kind)s.\(key)", message: "\(error)")
        items[key] = nil
        unreadable[key] = [problem]
        problems.append(problem)
    }
    return problems
}

/// Reads one member of `cohorts` or `flags`: a readable item goes into `items`; one with a problem (or defined
/// twice) goes into `unreadable` with why, so that only it falls back.
private func readItem<Item>(
    _ reader: inout JSONReader, kind: String, key: String, into items: inout [String: Item],
    unreadable: inout [String: [Problem]], problems: inout [Problem],
    _ read: (inout WireReader, inout JSONReader, String) throws -> Item?
) throws {
    let path = "\(kind)s.\(key)"
    var wire = WireReader()
    let item = try read(&wire, &reader, path)
    if items[key] != nil || unreadable[key] != nil {
        wire.problem(path, "\(kind) '\(key)' is defined twice")
    }
    if let item, wire.problems.isEmpty {
        items[key] = item
    } else {
        items[key] = nil
        unreadable[key] = wire.problems
    }
    problems += wire.problems
}

extension Flag {
    /// Reads one flag object (as sent to the admin API), leniently; `problems` lists what could not be read.
    public static func decode(_ bytes: [UInt8], key: String) throws -> (flag: Flag?, problems: [Problem]) {
        try JSONReader.read(bytes) { reader in
            var wire = WireReader()
            let flag = try wire.flag(&reader, key: key, "")
            return (wire.problems.isEmpty ? flag : nil, wire.relativeProblems)
        }
    }
}

extension Cohort {
    /// Reads one cohort object (as sent to the admin API), leniently; `problems` lists what could not be read.
    public static func decode(_ bytes: [UInt8]) throws -> (cohort: Cohort?, problems: [Problem]) {
        try JSONReader.read(bytes) { reader in
            var wire = WireReader()
            let cohort = try wire.cohort(&reader, "")
            return (wire.problems.isEmpty ? cohort : nil, wire.relativeProblems)
        }
    }
}

/// Reads the parts of a flag-set document, collecting shape problems with their paths instead of stopping.
/// Paths are autoclosures so that a document without problems never builds a path string.
struct WireReader {
    var problems: [Problem] = []

    /// Problems of an item read on its own, with paths relative to it (`rules[0].value`, not `.rules[0].value`).
    var relativeProblems: [Problem] {
        problems.map {
            Problem(path: $0.path.hasPrefix(".") ? String($0.path.dropFirst()) : $0.path, message: $0.message)
        }
    }

    mutating func problem(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }

    /// Checks the kind of the next value; on a mismatch records a problem and skips the value.
    mutating func expect(
        _ reader: inout JSONReader, _ kind: JSONReader.Kind, _ what: String, _ path: @autoclosure () -> String
    ) throws -> Bool {
        let found = try reader.peek()
        if found == kind { return true }
        problem(path(), "expected \(what), found \(found.described)")
        try reader.skipValue()
        return false
    }

    mutating func string(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> String? {
        guard try expect(&reader, .string, "a string", path()) else { return nil }
        return try reader.readString()
    }

    /// A string or `null` (absent).
    mutating func optionalString(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> String? {
        if try reader.readNull() { return nil }
        return try string(&reader, path())
    }

    mutating func bool(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Bool? {
        guard try expect(&reader, .bool, "true or false", path()) else { return nil }
        return try reader.readBool()
    }

    mutating func int(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Int? {
        guard try expect(&reader, .number, "an integer", path()) else { return nil }
        guard case .int(let value) = try reader.readNumber(), let int = Int(exactly: value) else {
            problem(path(), "expected an integer")
            return nil
        }
        return int
    }

    mutating func double(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Double? {
        guard try expect(&reader, .number, "a number", path()) else { return nil }
        switch try reader.readNumber() {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// An ISO-8601 date-time or `null` (absent), floored to the whole second.
    ///
    /// The canonical form writes whole seconds, so a fraction read here would be lost on the first write: a set
    /// would evaluate differently before and after it is stored, and would not equal its own canonical encoding.
    mutating func date(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Date? {
        if try reader.readNull() { return nil }
        guard let text = try string(&reader, path()) else { return nil }
        guard let date = ISO8601.parse(text) else {
            problem(path(), "'\(text)' is not an ISO-8601 date-time such as 2026-11-29T10:00:00Z")
            return nil
        }
        return Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    mutating func strings(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> [String] {
        guard try expect(&reader, .array, "an array of strings", path()) else { return [] }
        var result: [String] = []
        try reader.readArray { reader, index in
            if let text = try string(&reader, "\(path())[\(index)]") { result.append(text) }
        }
        return result
    }

    mutating func array(
        _ reader: inout JSONReader, _ path: @autoclosure () -> String,
        _ element: (inout WireReader, inout JSONReader, Int) throws -> Void
    ) throws {
        guard try expect(&reader, .array, "an array", path()) else { return }
        try reader.readArray { reader, index in try element(&self, &reader, index) }
    }

    mutating func members(
        _ reader: inout JSONReader, _ path: @autoclosure () -> String,
        _ member: (inout JSONReader, String) throws -> Void
    ) throws {
        guard try expect(&reader, .object, "an object", path()) else { return }
        try reader.readObject(member)
    }
}

extension Flag {
    /// A `double` flag written as `1` on the wire reads as the double 1.0 everywhere.
    mutating func normalizeNumbers() {
        func normalized(_ value: JSONValue) -> JSONValue {
            if case .int(let int) = value { return .double(Double(int)) }
            return value
        }
        defaultValue = normalized(defaultValue)
        killValue = killValue.map(normalized)
        expiredValue = expiredValue.map(normalized)
        for index in overrides.indices { overrides[index].value = normalized(overrides[index].value) }
        for index in rules.indices {
            switch rules[index].serve {
            case .value(let value): rules[index].serve = .value(normalized(value))
            case .rollout(var rollout):
                rollout.value = normalized(rollout.value)
                rules[index].serve = .rollout(rollout)
            case .split(var variants):
                for variant in variants.indices { variants[variant].value = normalized(variants[variant].value) }
                rules[index].serve = .split(variants)
            case .unknown: break
            }
        }
        if var flagRollout = rollout {
            flagRollout.value = normalized(flagRollout.value)
            rollout = flagRollout
        }
    }
}
