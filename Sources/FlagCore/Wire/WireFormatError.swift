/// Bytes of a wire format that cannot be used: which format, which field, and what is wrong with it.
///
/// The readers of the formats in this folder ignore members they do not know, and stop at the first member they
/// need that is missing or of the wrong shape, so that bad data is refused where it enters, with its path.
///
/// ```
/// the patch's "removed.flags[1]" must be a string, found a number
/// ```
public struct WireFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The format, as messages name it: `patch`, `mutation response`.
    public let format: String
    /// The JSON path of the bad member (`base`, `removed.flags[1]`); `nil` when the bytes as a whole are wrong.
    public let field: String?
    /// What is wrong and what was expected, written to follow the field's name.
    public let message: String

    /// An error in `format`, at `field`.
    public init(format: String, field: String?, message: String) {
        self.format = format
        self.field = field
        self.message = message
    }

    /// `the patch's "base" is missing; …`, or `the patch is not valid JSON: …` when no member is at fault.
    public var description: String {
        guard let field else { return "the \(format) \(message)" }
        return "the \(format)'s \"\(field)\" \(message)"
    }
}

/// Reads the members of one wire format strictly: a member of the wrong kind is a `WireFormatError` naming it.
/// (The flag-set document is read leniently instead, item by item: see `FlagSet.decode`.)
struct WireFields {
    /// The format's name in messages.
    let format: String

    func error(_ field: String?, _ message: String) -> WireFormatError {
        WireFormatError(format: format, field: field, message: message)
    }

    /// Reads a document whose top level must be an object; malformed JSON becomes a `WireFormatError` too.
    func read<T>(_ bytes: [UInt8], _ body: (inout JSONReader) throws -> T) throws(WireFormatError) -> T {
        do {
            return try JSONReader.read(bytes) { reader in
                let found = try reader.peek()
                guard found == .object else { throw error(nil, "must be a JSON object, found \(found.described)") }
                return try body(&reader)
            }
        } catch let error as WireFormatError {
            throw error
        } catch {
            throw self.error(nil, "is not valid JSON: \(error)")
        }
    }

    /// Checks that the next value is of `kind`.
    func expect(_ reader: inout JSONReader, _ kind: JSONReader.Kind, _ what: String, _ field: String) throws {
        let found = try reader.peek()
        guard found == kind else { throw error(field, "must be \(what), found \(found.described)") }
    }

    func int(_ reader: inout JSONReader, _ field: String) throws -> Int {
        try expect(&reader, .number, "an integer", field)
        guard case .int(let value) = try reader.readNumber(), let int = Int(exactly: value) else {
            throw error(field, "must be an integer")
        }
        return int
    }

    func bool(_ reader: inout JSONReader, _ field: String) throws -> Bool {
        try expect(&reader, .bool, "true or false", field)
        return try reader.readBool()
    }

    func string(_ reader: inout JSONReader, _ field: String) throws -> String {
        try expect(&reader, .string, "a string", field)
        return try reader.readString()
    }

    /// An array of strings.
    func strings(_ reader: inout JSONReader, _ field: String) throws -> [String] {
        try expect(&reader, .array, "an array of strings", field)
        var result: [String] = []
        try reader.readArray { reader, index in result.append(try string(&reader, "\(field)[\(index)]")) }
        return result
    }

    /// The exact bytes of an object, kept unread (an item travels as its canonical bytes).
    func rawObject(_ reader: inout JSONReader, _ field: String) throws -> [UInt8] {
        try expect(&reader, .object, "an object", field)
        return try reader.readRawValue()
    }

    /// An object whose members are objects, each kept as its exact bytes; a name given twice is an error.
    func rawObjects(_ reader: inout JSONReader, _ field: String) throws -> [String: [UInt8]] {
        try expect(&reader, .object, "an object", field)
        var members: [String: [UInt8]] = [:]
        try reader.readObject { reader, name in
            guard members.updateValue(try rawObject(&reader, "\(field).\(name)"), forKey: name) == nil else {
                throw error("\(field).\(name)", "is given twice")
            }
        }
        return members
    }
}
