/// The wire form of a flag's prerequisites (docs/core.md, "Prerequisites").
///
/// People write `"prerequisites": [{"flag": "new-checkout", "values": [true]}]`. A client built before
/// prerequisites skips a flag member it does not know, and would then serve the flag as if it had none; so the
/// canonical encoding carries them as the flag's first rule instead, named `prerequisites`, with one condition per
/// prerequisite: `{"attribute": FLAG, "op": "prerequisite", "values": [each value as its canonical JSON text]}`.
/// An older client meets the unknown operator and serves the flag's compiled-in default; this build lifts the rule
/// back into `prerequisites` when it reads the flag.
extension Flag {
    /// The rule the canonical encoding writes first; `nil` without prerequisites. It serves the default, so that
    /// its shape is a valid rule's for every reader.
    var prerequisiteRule: Rule? {
        guard !prerequisites.isEmpty else { return nil }
        let conditions = prerequisites.map { prerequisite in
            Condition(
                attribute: prerequisite.flag, op: .prerequisite,
                values: prerequisite.values.map { String(decoding: $0.canonicalBytes, as: UTF8.self) })
        }
        return Rule(name: "prerequisites", target: .conditions(conditions), serve: .value(defaultValue))
    }
}

extension WireReader {
    /// Moves the wire form of `flag`'s prerequisites (its first rule, every condition of which is a `prerequisite`
    /// one) into `flag.prerequisites`. A flag that also lists `prerequisites` as a member has them twice.
    mutating func liftPrerequisites(_ flag: inout Flag, _ path: @autoclosure () -> String) {
        guard let first = flag.rules.first, case .conditions(let conditions) = first.target, !conditions.isEmpty,
            conditions.allSatisfy({ $0.op == .prerequisite })
        else { return }
        if !flag.prerequisites.isEmpty {
            problem("\(path()).prerequisites", "given twice: as a member and as the first rule's conditions")
            return
        }
        var lifted: [Prerequisite] = []
        for (index, condition) in conditions.enumerated() {
            var values: [JSONValue] = []
            for (valueIndex, text) in condition.values.enumerated() {
                guard let value = try? JSONReader.read(Array(text.utf8), { try $0.readValue() }) else {
                    problem(
                        "\(path()).rules[0].conditions[\(index)].values[\(valueIndex)]",
                        "a prerequisite's value is written as JSON text, e.g. \"true\" or \"\\\"blue\\\"\"")
                    continue
                }
                values.append(value)
            }
            lifted.append(Prerequisite(flag: condition.attribute, values: values))
        }
        flag.rules.removeFirst()
        flag.prerequisites = lifted
    }

    /// Reads the `prerequisites` member: `[{"flag": KEY, "values": [VALUE, …]}]`.
    mutating func prerequisites(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws
        -> [Prerequisite]
    {
        var result: [Prerequisite] = []
        try array(&reader, path()) { wire, reader, index in
            func itemPath() -> String { "\(path())[\(index)]" }
            guard try wire.expect(&reader, .object, "a prerequisite object", itemPath()) else { return }
            var flag: String?
            var values: [JSONValue]?
            try reader.readObject { reader, field in
                switch field {
                case "flag": flag = try wire.string(&reader, "\(itemPath()).flag")
                case "values":
                    guard try wire.expect(&reader, .array, "a list of values", "\(itemPath()).values") else { return }
                    var read: [JSONValue] = []
                    try reader.readArray { reader, _ in read.append(try reader.readValue()) }
                    values = read
                default: try reader.skipValue()
                }
            }
            guard let flag, let values else {
                wire.problem(itemPath(), "a prerequisite needs 'flag' (a key) and 'values' (the values it must serve)")
                return
            }
            result.append(Prerequisite(flag: flag, values: values))
        }
        return result
    }
}
