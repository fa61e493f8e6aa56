import Foundation

/// Canonical encoding (SPEC §3): fields in a fixed order, flags and cohorts sorted by key (UTF-8 byte order),
/// absent optionals and empty lists left out, dates as whole-second UTC. The same set always yields the same bytes,
/// so the bytes can name a version (ETag, digest) and be diffed.
extension FlagSet {
    /// The canonical document; `pretty` adds line breaks and indentation for people.
    public func encoded(pretty: Bool = false) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 1024 * (flags.count + cohorts.count + 1))
        writeHeader(to: &writer)
        writer.key("cohorts")
        writer.beginObject()
        for name in cohorts.keys.sorted(by: utf8Less) {
            writer.key(name)
            cohorts[name]?.write(to: &writer)
        }
        writer.endObject()
        writer.key("flags")
        writer.beginObject()
        for key in flags.keys.sorted(by: utf8Less) {
            writer.key(key)
            flags[key]?.write(to: &writer)
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// Builds the canonical compact document from items already encoded with `Flag.encoded()` and
    /// `Cohort.encoded()`: byte for byte what `encoded()` gives for the same set, without re-encoding any item.
    public static func assemble(
        schema: Int = FlagSet.currentSchema, name: String, version: Int, updatedAt: Date?,
        cohorts: [String: [UInt8]], flags: [String: [UInt8]]
    ) -> [UInt8] {
        let size = cohorts.values.reduce(0) { $0 + $1.count + 64 } + flags.values.reduce(0) { $0 + $1.count + 64 }
        var writer = JSONWriter(reservingCapacity: size + 256)
        var header = FlagSet(name: name, version: version, updatedAt: updatedAt, schema: schema)
        header.readProblems = []
        header.writeHeader(to: &writer)
        writer.rawMembers("cohorts", cohorts)
        writer.rawMembers("flags", flags)
        writer.endObject()
        return writer.bytes
    }

    private func writeHeader(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("schema")
        writer.int(schema)
        writer.key("set")
        writer.string(name)
        writer.key("version")
        writer.int(version)
        if let updatedAt {
            writer.key("updatedAt")
            writer.string(ISO8601.format(updatedAt))
        }
    }
}

extension Flag {
    /// The canonical compact encoding of this flag (without its key, which is the member name in a set).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 512)
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the flag object.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("type")
        writer.string(type.name)
        writer.key("kind")
        writer.string(kind.name)
        if let values {
            writer.key("values")
            writer.strings(values)
        }
        writer.optionalString("description", description)
        writer.optionalString("owner", owner)
        writer.key("default")
        writer.value(defaultValue)
        if let killValue {
            writer.key("killValue")
            writer.value(killValue)
        }
        writer.key("killed")
        writer.bool(killed)
        writer.optionalDate("expiresAt", expiresAt)
        if let expiredValue {
            writer.key("expiredValue")
            writer.value(expiredValue)
        }
        if archived {
            writer.key("archived")
            writer.bool(true)
        }
        writer.optionalString("salt", salt)
        if !overrides.isEmpty {
            writer.key("overrides")
            writer.beginArray()
            for override in overrides { override.write(to: &writer) }
            writer.endArray()
        }
        if !rules.isEmpty || !prerequisites.isEmpty {
            writer.key("rules")
            writer.beginArray()
            if let rule = prerequisiteRule { rule.write(to: &writer) }
            for rule in rules { rule.write(to: &writer) }
            writer.endArray()
        }
        if let rollout {
            writer.key("rollout")
            rollout.write(to: &writer)
        }
        writer.endObject()
    }
}

extension Override {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        switch target {
        case .unit(let unit):
            writer.key("unit")
            writer.string(unit)
        case .cohort(let cohort):
            writer.key("cohort")
            writer.string(cohort)
        }
        writer.key("value")
        writer.value(value)
        writer.optionalDate("until", until)
        writer.endObject()
    }
}

extension Rule {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("name")
        writer.string(name)
        switch target {
        case .cohort(let cohort):
            writer.key("cohort")
            writer.string(cohort)
        case .conditions(let conditions):
            writer.key("conditions")
            writer.conditions(conditions)
        }
        switch serve {
        case .value(let value):
            writer.key("value")
            writer.value(value)
        case .rollout(let rollout):
            writer.key("rollout")
            rollout.write(to: &writer)
        case .split(let variants):
            writer.key("split")
            writer.beginArray()
            for variant in variants {
                writer.beginObject()
                writer.optionalString("name", variant.name)
                writer.key("value")
                writer.value(variant.value)
                writer.key("weight")
                writer.number(variant.weight)
                writer.endObject()
            }
            writer.endArray()
        case .unknown:
            // A serve kind this build cannot read cannot be written back either; such a flag never validates.
            break
        }
        writer.endObject()
    }
}

extension Rollout {
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("value")
        writer.value(value)
        writer.optionalString("salt", salt)
        switch stage {
        case .percent(let percent):
            writer.key("percent")
            writer.number(percent)
        case .schedule(let steps):
            writer.key("schedule")
            writer.beginArray()
            for step in steps {
                writer.beginObject()
                writer.key("at")
                writer.string(ISO8601.format(step.at))
                writer.key("percent")
                writer.number(step.percent)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.optionalDate("pausedAt", pausedAt)
        writer.endObject()
    }
}

extension Cohort {
    /// The canonical compact encoding of this cohort (without its name).
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the cohort object.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.optionalString("description", description)
        for (field, units) in [("include", include), ("exclude", exclude)] where !units.isEmpty {
            writer.key(field)
            writer.strings(units)
        }
        if !groups.isEmpty {
            writer.key("groups")
            writer.beginArray()
            for group in groups { writer.conditions(group) }
            writer.endArray()
        }
        writer.endObject()
    }
}

extension JSONWriter {
    mutating func optionalString(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        string(value)
    }

    mutating func optionalDate(_ key: String, _ value: Date?) {
        guard let value else { return }
        self.key(key)
        string(ISO8601.format(value))
    }

    mutating func conditions(_ conditions: [Condition]) {
        beginArray()
        for condition in conditions {
            beginObject()
            key("attribute")
            string(condition.attribute)
            key("op")
            string(condition.op.name)
            if !condition.values.isEmpty {
                key("values")
                beginArray()
                for value in condition.values { string(value) }
                endArray()
            }
            endObject()
        }
        endArray()
    }
}
