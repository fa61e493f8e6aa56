import Foundation

extension TelemetryReport {
    private static let fields = WireFields(format: "telemetry report")

    /// Reads a report strictly: `instance`, `sdk` and `capabilities` (with `schema` and `operators`) are required,
    /// every member present must have its shape, a name given twice in one object is refused, a string or a member
    /// name with a control character (C0, DEL, C1) is refused, a value listed twice in `enums` is refused, and every
    /// part is bounded by `limits`. Unknown
    /// members are ignored (a newer SDK may send more). `appliedAt` is floored to the whole second, as `encoded()`
    /// writes it.
    /// - Throws: `WireFormatError` naming the first bad member, or the limit a report is over.
    public static func decode(_ bytes: [UInt8], limits: Limits = Limits()) throws(WireFormatError) -> TelemetryReport {
        let fields = Self.fields
        guard bytes.count <= limits.maxBytes else {
            throw fields.error(nil, "is \(bytes.count) bytes, over the limit of \(limits.maxBytes)")
        }
        // What a report names reaches people (`flagctl clients` and `usage`, the dashboard), and a shipped SDK key
        // is public: a control character, such as an ESC that rewrites an admin's terminal, is refused where it
        // enters. `what` leads the message: "contains", or "has a name with" for a member name.
        func printable(_ value: String, _ field: String?, _ what: String) throws {
            guard let (character, position) = value.firstControlCharacter else { return }
            throw fields.error(
                field,
                "\(what) the control character \(character.codePointNotation) at position \(position); send printable text"
            )
        }
        // Reads the members of the object at `field` (`nil`: the report itself). A name with a control character is
        // refused, even an unknown member's. A name given twice is refused: readers that keep the first and readers
        // that keep the last would see different reports, and a second `counts` would slip past `maxFlags`. Bad
        // JSON inside a member (nesting past the reader's depth limit, a number out of range) is reported at that
        // member.
        func object(
            _ reader: inout JSONReader, _ field: String?, _ body: (inout JSONReader, String, String) throws -> Void
        ) throws {
            var seen: Set<String> = []
            try reader.readObject { reader, name in
                try printable(name, field, "has a name with")
                let path = field.map { "\($0).\(name)" } ?? name
                guard seen.insert(name).inserted else { throw fields.error(path, "is given twice") }
                do {
                    try body(&reader, name, path)
                } catch let error as JSONError {
                    throw fields.error(path, "is not valid JSON: \(error)")
                }
            }
        }
        func text(_ reader: inout JSONReader, _ field: String) throws -> String {
            let value = try fields.string(&reader, field)
            guard !value.isEmpty, value.utf8.count <= limits.maxStringBytes else {
                throw fields.error(field, "must have 1 to \(limits.maxStringBytes) bytes, found \(value.utf8.count)")
            }
            try printable(value, field, "contains")
            return value
        }
        // An integer in `range`, which `bound` names; a fraction, an exponent or a number past Int64 is refused
        // with the same bound.
        func integer(_ reader: inout JSONReader, _ field: String, _ range: ClosedRange<Int>, _ bound: String) throws
            -> Int
        {
            try fields.expect(&reader, .number, "an integer, \(bound)", field)
            let number: JSONValue
            do {
                number = try reader.readNumber()
            } catch let error as JSONError {
                throw fields.error(field, "must be an integer, \(bound): \(error.message)")
            }
            switch number {
            case .int(let value):
                guard let int = Int(exactly: value), range.contains(int) else {
                    throw fields.error(field, "must be \(bound), found \(value)")
                }
                return int
            case .double(let value): throw fields.error(field, "must be an integer, \(bound), found \(value)")
            default: throw fields.error(field, "must be an integer, \(bound)")
            }
        }
        func software(_ reader: inout JSONReader, _ field: String) throws -> Software {
            try fields.expect(&reader, .object, "an object with \"name\" and \"version\"", field)
            var name: String?
            var version: String?
            try object(&reader, field) { reader, member, path in
                switch member {
                case "name": name = try text(&reader, path)
                case "version": version = try text(&reader, path)
                default: try reader.skipValue()
                }
            }
            guard let name else { throw fields.error("\(field).name", "is missing") }
            guard let version else { throw fields.error("\(field).version", "is missing") }
            return Software(name: name, version: version)
        }
        func members(
            _ reader: inout JSONReader, _ field: String, limit: Int, what: String,
            _ body: (inout JSONReader, String, String) throws -> Void
        ) throws {
            try fields.expect(&reader, .object, "an object", field)
            var count = 0
            try object(&reader, field) { reader, name, path in
                count += 1
                guard count <= limit else { throw fields.error(field, "has more than \(limit) \(what)") }
                guard name.utf8.count <= limits.maxStringBytes else {
                    throw fields.error(field, "has a name of \(name.utf8.count) bytes, over \(limits.maxStringBytes)")
                }
                try body(&reader, name, path)
            }
        }
        // A value of an enum flag, bounded as the flag's own values are: in characters.
        func enumValue(_ reader: inout JSONReader, _ field: String) throws -> String {
            let value = try fields.string(&reader, field)
            guard !value.isEmpty, value.count <= limits.maxEnumValueLength else {
                throw fields.error(
                    field, "must have 1 to \(limits.maxEnumValueLength) characters, found \(value.count)")
            }
            try printable(value, field, "contains")
            return value
        }
        func knownValues(_ reader: inout JSONReader, _ field: String) throws -> KnownValues {
            try fields.expect(&reader, .object, "an object with \"values\"", field)
            var values: [String]?
            var defaultValue: String?
            try object(&reader, field) { reader, member, path in
                switch member {
                case "values":
                    try fields.expect(&reader, .array, "an array of strings", path)
                    var listed: [String] = []
                    var seen: Set<String> = []
                    try reader.readArray { reader, index in
                        guard index < limits.maxEnumValues else {
                            throw fields.error(path, "has more than \(limits.maxEnumValues) values")
                        }
                        let value = try enumValue(&reader, "\(path)[\(index)]")
                        guard seen.insert(value).inserted else {
                            throw fields.error("\(path)[\(index)]", "is \"\(value)\" again; list each value once")
                        }
                        listed.append(value)
                    }
                    values = listed
                case "default": defaultValue = try enumValue(&reader, path)
                default: try reader.skipValue()
                }
            }
            guard let values else { throw fields.error("\(field).values", "is missing") }
            guard !values.isEmpty else { throw fields.error("\(field).values", "must list at least one value") }
            return KnownValues(values: values, defaultValue: defaultValue)
        }
        let countBound = "from 0 to \(limits.maxCount)"
        var instance: String?
        var sdk: Software?
        var capabilities: ClientCapabilities?
        var report = TelemetryReport(instance: "", sdk: Software(name: "", version: ""))
        try fields.read(bytes) { reader in
            try object(&reader, nil) { reader, field, _ in
                // `null` for an optional member is its absence, as the admin API writes it (`"app": null`).
                if ["app", "version", "appliedAt"].contains(field), try reader.readNull() { return }
                switch field {
                case "instance": instance = try text(&reader, "instance")
                case "sdk": sdk = try software(&reader, "sdk")
                case "app": report.app = try software(&reader, "app")
                case "version": report.version = try integer(&reader, "version", 1...Int.max, "1 or more")
                case "appliedAt":
                    let text = try fields.string(&reader, "appliedAt")
                    guard let date = ISO8601.parse(text) else {
                        throw fields.error("appliedAt", "must be an RFC 3339 time such as 2026-12-02T10:00:00Z")
                    }
                    report.appliedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
                case "capabilities":
                    try fields.expect(&reader, .object, "an object with \"schema\" and \"operators\"", "capabilities")
                    var schema: Int?
                    var operators: Set<String>?
                    try object(&reader, "capabilities") { reader, member, path in
                        switch member {
                        case "schema": schema = try integer(&reader, path, 1...Int.max, "1 or more")
                        case "operators":
                            try fields.expect(&reader, .array, "an array of strings", path)
                            var names: Set<String> = []
                            try reader.readArray { reader, index in
                                guard index < limits.maxOperators else {
                                    throw fields.error(path, "has more than \(limits.maxOperators) operators")
                                }
                                names.insert(try text(&reader, "\(path)[\(index)]"))
                            }
                            operators = names
                        default: try reader.skipValue()
                        }
                    }
                    guard let schema else { throw fields.error("capabilities.schema", "is missing") }
                    // Read as "knows no operator", a missing list would refuse every rule for this client.
                    guard let operators else { throw fields.error("capabilities.operators", "is missing") }
                    capabilities = ClientCapabilities(schema: schema, operators: operators)
                case "enums":
                    try members(&reader, "enums", limit: limits.maxEnumFlags, what: "flags") { reader, flag, path in
                        guard !flag.isEmpty else { throw fields.error("enums", "has an empty flag key") }
                        report.enums[flag] = try knownValues(&reader, path)
                    }
                case "counts":
                    try members(&reader, "counts", limit: limits.maxFlags, what: "flags") { reader, flag, path in
                        guard !flag.isEmpty else { throw fields.error("counts", "has an empty flag key") }
                        var variants: [String: [String: Int]] = [:]
                        try members(&reader, path, limit: limits.maxVariants, what: "variants") {
                            reader, variant, path in
                            var reasons: [String: Int] = [:]
                            try members(&reader, path, limit: limits.maxReasons, what: "reasons") {
                                reader, reason, path in
                                reasons[reason] = try integer(&reader, path, 0...limits.maxCount, countBound)
                            }
                            variants[variant] = reasons
                        }
                        report.counts[flag] = variants
                    }
                default: try reader.skipValue()
                }
            }
        }
        guard let instance else { throw fields.error("instance", "is missing; send the id from the stream's answer") }
        guard let sdk else { throw fields.error("sdk", "is missing") }
        guard let capabilities else { throw fields.error("capabilities", "is missing") }
        report.instance = instance
        report.sdk = sdk
        report.capabilities = capabilities
        return report
    }
}
