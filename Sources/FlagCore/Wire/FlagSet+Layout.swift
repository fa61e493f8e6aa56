extension FlagSet {
    /// A document's header and where each of its items lies in its bytes, found without decoding any item, so
    /// that one flag can be decoded alone (`Flag.decode` of `bytes[flagRanges[key]]`): how a client launches from
    /// a cached 1 MB document without reading all of it.
    public struct Layout: Sendable, Equatable {
        /// The document's `schema` (this build's when absent or not an integer).
        public var schema: Int
        /// The document's `set` (empty when absent or not a string).
        public var name: String
        /// The document's `version` (0 when absent or not an integer).
        public var version: Int
        /// The bytes of the `cohorts` value, when present.
        public var cohortsRange: Range<Int>?
        /// The bytes of each member of `flags` (a range may start with whitespace, which `Flag.decode` skips).
        public var flagRanges: [String: Range<Int>]

        /// A layout of the given parts.
        public init(
            schema: Int = FlagSet.currentSchema, name: String = "", version: Int = 0, cohortsRange: Range<Int>? = nil,
            flagRanges: [String: Range<Int>] = [:]
        ) {
            self.schema = schema
            self.name = name
            self.version = version
            self.cohortsRange = cohortsRange
            self.flagRanges = flagRanges
        }

        /// Scans a document's bytes: unknown members are skipped, and header members of the wrong type keep their
        /// defaults, as `FlagSet.decode` reads them.
        /// - Throws: `JSONError` when the bytes are not JSON or the document is not an object.
        public static func scan(_ bytes: [UInt8]) throws -> Layout {
            var layout = Layout()
            try JSONReader.read(bytes) { reader in
                guard try reader.peek() == .object else { throw reader.error("a flag set must be a JSON object") }
                try reader.readObject { reader, field in
                    switch field {
                    case "schema":
                        if case .int(let value) = try reader.readValue() { layout.schema = Int(clamping: value) }
                    case "set":
                        if case .string(let value) = try reader.readValue() { layout.name = value }
                    case "version":
                        if case .int(let value) = try reader.readValue() { layout.version = Int(clamping: value) }
                    case "cohorts":
                        let start = reader.offset
                        try reader.skipValue()
                        layout.cohortsRange = start..<reader.offset
                    case "flags":
                        guard try reader.peek() == .object else {
                            try reader.skipValue()
                            return
                        }
                        try reader.readObject { reader, key in
                            let start = reader.offset
                            try reader.skipValue()
                            layout.flagRanges[key] = start..<reader.offset
                        }
                    default: try reader.skipValue()
                    }
                }
            }
            return layout
        }
    }
}
