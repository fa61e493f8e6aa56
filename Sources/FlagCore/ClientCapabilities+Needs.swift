/// What a client must be able to evaluate for each flag of a set: the compatibility gate's question.
extension FlagSet {
    /// What a client needs to evaluate `flag` of this set: the document's schema, and every operator in the flag's
    /// rules and in the cohorts it uses, and the cohorts those use, in turn. A client that lacks one serves the
    /// flag's compiled-in default.
    public func needs(of flag: Flag) -> ClientCapabilities {
        ClientCapabilities.needs(of: flag, schema: schema) { cohorts[$0] }
    }
}

extension ClientCapabilities {
    /// What a client needs to evaluate `flag` in a document of `schema` whose cohorts `cohort` looks up: the
    /// operators of its rules and of the cohorts it uses, transitively (a cycle is followed once), and
    /// `prerequisite` when it has prerequisites.
    public static func needs(of flag: Flag, schema: Int, cohort: (String) -> Cohort?) -> ClientCapabilities {
        // Prerequisites travel as a rule of `prerequisite` conditions (Flag+Prerequisites.swift).
        var operators: Set<String> = flag.prerequisites.isEmpty ? [] : [Operator.prerequisite.name]
        for rule in flag.rules {
            if case .conditions(let conditions) = rule.target {
                for condition in conditions { operators.insert(condition.op.name) }
            }
        }
        var seen: Set<String> = []
        var pending = Array(flag.cohortNames)
        while let name = pending.popLast() {
            guard seen.insert(name).inserted, let found = cohort(name) else { continue }
            operators.formUnion(Self.operators(of: found))
            pending.append(contentsOf: found.cohortNames)
        }
        return ClientCapabilities(schema: schema, operators: operators)
    }

    /// The operators of a cohort's own conditions (not of the cohorts it names).
    public static func operators(of cohort: Cohort) -> Set<String> {
        var operators: Set<String> = []
        for group in cohort.groups {
            for condition in group { operators.insert(condition.op.name) }
        }
        return operators
    }
}

extension Flag {
    /// The strings a `string` flag can serve: its default, kill and expired values, and the values of its overrides,
    /// rules, split arms and rollouts, whether or not they are in force now (a kill or an expiry serves them without
    /// a change to the flag). None for an archived flag, which serves the caller's default, or another type.
    public var servableStrings: Set<String> {
        guard type == .string, !archived else { return [] }
        var values = [defaultValue, killValue, expiredValue].compactMap { $0 }
        values += overrides.map(\.value)
        for rule in rules {
            switch rule.serve {
            case .value(let value): values.append(value)
            case .rollout(let rollout): values.append(rollout.value)
            case .split(let arms): values += arms.map(\.value)
            case .unknown: break
            }
        }
        if let rollout { values.append(rollout.value) }
        return Set(
            values.compactMap { value in
                if case .string(let text) = value { return text }
                return nil
            })
    }
}

/// The compatibility gate's rules (docs/telemetry.md), in one place for the server's gate and for
/// `flagctl lint --against`: what a write introduces, who lacks it, and when that refuses the write.
public enum CompatibilityGate {
    /// Something a client must be able to evaluate, or to read.
    public enum Construct: Sendable, Hashable {
        /// A condition operator, by its wire name.
        case `operator`(String)
        /// A document schema.
        case schema(Int)
        /// A value a `string` flag can serve, which an app that reads the flag as an enum must have a case for.
        case value(String, flag: String)

        /// `operator "semver_gte"`, `schema 2`, `value "orange"`.
        public var description: String {
            switch self {
            case .operator(let name): "operator \"\(name)\""
            case .schema(let schema): "schema \(schema)"
            case .value(let value, _): "value \"\(value)\""
            }
        }

        /// Whether a client that declared `capabilities`, and `enums` for the flags it reads as enums, cannot
        /// evaluate it. A client that declared no values for a flag does not read it as an enum (or cannot say, being
        /// older): it takes any string, so no value is lacking.
        public func isLacking(
            in capabilities: ClientCapabilities, enums: [String: TelemetryReport.KnownValues]
        ) -> Bool {
            switch self {
            case .operator(let name): !capabilities.operators.contains(name)
            case .schema(let schema): capabilities.schema < schema
            case .value(let value, let flag): enums[flag].map { !$0.values.contains(value) } ?? false
            }
        }
    }

    /// Whether `lacking` of `active` instances refuse a write: more than 0.1 % of them.
    public static func refuses(lacking: Int, active: Int) -> Bool {
        lacking * 1000 > active
    }

    /// What a flag whose version needs `now` introduces over its version before, which needed `before` (`nil`: the
    /// flag is new): the schema if it grew, and each operator it did not need.
    public static func introduced(needing now: ClientCapabilities, before: ClientCapabilities?) -> [Construct] {
        var constructs: [Construct] = []
        if now.schema > (before?.schema ?? 0) { constructs.append(.schema(now.schema)) }
        for name in now.operators.subtracting(before?.operators ?? []).sorted(by: utf8Less) {
            constructs.append(.operator(name))
        }
        return constructs
    }

    /// The values a flag's version `now` can serve that its version `before` (`nil`: the flag is new) could not
    /// (`Flag.servableStrings`), in UTF-8 order.
    public static func introduced(serving now: Flag, before: Flag?) -> [Construct] {
        now.servableStrings.subtracting(before?.servableStrings ?? []).sorted(by: utf8Less).map {
            .value($0, flag: now.key)
        }
    }

    /// An instance's app and SDK as the gate names those that lack a value (`Shop 5.2.0 with FlagClient 2.0.0`), or
    /// its SDK alone when it named no app: which builds meet a value is a question of the app's version.
    public static func build(sdk: TelemetryReport.Software, app: TelemetryReport.Software?) -> String {
        let text = "\(sdk.name) \(sdk.version)"
        return app.map { "\($0.name) \($0.version) with \(text)" } ?? text
    }

    /// What the instances that lack a value serve in its place, from the compiled-in defaults they reported with
    /// how many reported each (`nil`: not reported): `their compiled-in default "blue"` when they agree, else each
    /// with its count, the most first.
    public static func servedInstead(_ defaults: [String?: Int]) -> String {
        // `keys.first` is a `String??`: unwrapped once, the one default reported, or `nil` when none was.
        if defaults.count == 1, let only = defaults.keys.first {
            return only.map { "their compiled-in default \"\($0)\"" } ?? "their compiled-in default"
        }
        let listed = defaults.map { (text: $0.key.map { "\"\($0)\"" } ?? "not reported", count: $0.value) }
            .sorted { ($1.count, $0.text) < ($0.count, $1.text) }
        return "their compiled-in defaults, " + listed.map { "\($0.text) (\($0.count))" }.joined(separator: ", ")
    }

    /// The operators a cohort's version `now` uses in its own conditions that its version `before` did not.
    public static func introduced(by now: Cohort, before: Cohort?) -> [Construct] {
        let old = before.map(ClientCapabilities.operators(of:)) ?? []
        return ClientCapabilities.operators(of: now).subtracting(old).sorted(by: utf8Less).map { .operator($0) }
    }
}
