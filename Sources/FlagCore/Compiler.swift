import Foundation

/// Checks what SPEC §3 requires of a set and builds the evaluation plans, one part at a time: the cohorts of a set
/// together, since `in_cohort` links them (`Compiler+Cohorts.swift`), then each flag on its own against them
/// (`Compiler+Flags.swift`). Problems are both reported (validation) and confined to the items they touch
/// (evaluation): a flag with a problem, or using a broken cohort, evaluates to the caller's default.
struct Compiler {
    var problems: [Problem] = []
    /// The index of each cohort the set has (readable or not), by name.
    let cohortIndex: [String: Int]
    /// The name of each index.
    let cohortNames: [String]
    /// Cohorts that cannot be evaluated (their own problem, a cycle, or a broken cohort they use), with why.
    var brokenCohorts: [Int: String]
    /// For a cohort broken because it uses a broken one: the cohort whose own fault it is. Messages name that root
    /// instead of nesting every link, which made them grow with the chain (memory quadratic in its length).
    var brokenRoots: [Int: Int] = [:]
    /// Why the flag being compiled cannot be evaluated, when a cohort it uses is broken.
    var flagBreakage: String?

    /// A compiler for the cohorts numbered as `cohortNames` says; `cohortIndex` holds the names the set has.
    init(cohortIndex: [String: Int], cohortNames: [String], broken: [Int: String] = [:]) {
        self.cohortIndex = cohortIndex
        self.cohortNames = cohortNames
        self.brokenCohorts = broken
    }

    /// A compiler for flags of a set whose cohorts are `cohorts`.
    init(cohorts: CompiledCohorts) {
        self.init(cohortIndex: cohorts.slots, cohortNames: cohorts.names, broken: cohorts.broken)
    }

    /// Problems of a set's header: its schema, name and version.
    static func headerProblems(schema: Int, name: String, version: Int) -> [Problem] {
        var problems: [Problem] = []
        if schema > FlagSet.currentSchema {
            problems.append(
                Problem(
                    path: "schema",
                    message: "schema \(schema) is newer than this build understands (\(FlagSet.currentSchema))"))
        } else if schema < 1 {
            problems.append(Problem(path: "schema", message: "schema must be 1 or more, not \(schema)"))
        }
        if !isValidKey(name) {
            problems.append(Problem(path: "set", message: "'\(name)' is not a valid set name: \(keyRule)"))
        }
        if version < 0 { problems.append(Problem(path: "version", message: "must be 0 or more, not \(version)")) }
        return problems
    }

    static let keyRule = "1–128 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"

    mutating func report(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }

    // MARK: - Conditions

    /// Parses a condition's operands, reporting each bad one at its path; `nil` when the condition is unusable.
    mutating func compile(_ condition: Condition, path: @autoclosure () -> String) -> Matcher? {
        let start = problems.count
        let values = condition.values
        func strings() -> [String] { values }
        func parsed<T>(_ what: String, _ parse: (String) -> T?) -> [T] {
            var result: [T] = []
            for (index, value) in values.enumerated() {
                if let parsedValue = parse(value) {
                    result.append(parsedValue)
                } else {
                    report("\(path()).values[\(index)]", "'\(value)' is not \(what)")
                }
            }
            return result
        }
        if condition.attribute.isEmpty && condition.op != .inCohort {
            report("\(path()).attribute", "missing; name the attribute to test (or unitID)")
        }
        let test: Matcher.Test
        switch condition.op {
        case .eq, .in: test = .equals(strings())
        case .neq, .notIn: test = .equalsNone(strings())
        case .contains: test = .contains(strings())
        case .startsWith: test = .startsWith(strings())
        case .endsWith: test = .endsWith(strings())
        case .matches:
            var patterns: [Pattern] = []
            for (index, value) in values.enumerated() {
                if Pattern.hasNestedRepetition(value) {
                    report(
                        "\(path()).values[\(index)]",
                        "'\(value)' repeats a group that repeats or alternates, which can take exponential time; "
                            + "rewrite it without nesting (e.g. (a+)+ → a+)")
                    continue
                }
                do throws(Pattern.Invalid) {
                    patterns.append(try Pattern(value))
                } catch {
                    let problem =
                        switch error {
                        case .syntax: "is not a valid regular expression"
                        case .openAtEnd: "ends inside a \\Q quote or a (?x) comment; close it with \\E or a line break"
                        }
                    report("\(path()).values[\(index)]", "'\(value)' \(problem)")
                }
            }
            test = .matches(patterns)
        case .lt, .lte, .gt, .gte:
            test = .number(
                comparison(condition.op), parsed("a number") { Double($0).flatMap { $0.isFinite ? $0 : nil } })
        case .semverEq, .semverLt, .semverLte, .semverGt, .semverGte:
            test = .semver(
                comparison(condition.op),
                parsed("a semantic version such as 5.2.0") { SemanticVersion($0).map(VersionOperand.init) })
        case .before, .after:
            let instants = parsed("an ISO-8601 date-time such as 2026-11-29T10:00:00Z") {
                ISO8601.parse($0)?.timeIntervalSince1970
            }
            test = .instant(condition.op == .before ? .lt : .gt, instants)
        case .exists, .notExists:
            if !values.isEmpty { report("\(path()).values", "\(condition.op.name) takes no values") }
            test = condition.op == .exists ? .exists : .notExists
        case .inCohort:
            var indexes: [Int] = []
            for (index, name) in values.enumerated() {
                if let cohort = cohortIndex[name] {
                    indexes.append(cohort)
                } else {
                    report("\(path()).values[\(index)]", "unknown cohort '\(name)'")
                }
            }
            test = .inCohort(indexes)
        case .prerequisite:
            report(
                "\(path()).op",
                "'prerequisite' only appears in a flag's first rule, the wire form of its prerequisites; "
                    + "list them in the flag's 'prerequisites' instead")
            return nil
        case .unknown(let name):
            report(
                "\(path()).op",
                "unknown operator '\(name)' (this build knows \(Operator.conditions.map(\.name).joined(separator: ", ")))"
            )
            return nil
        }
        if values.isEmpty, condition.op != .exists, condition.op != .notExists {
            report("\(path()).values", "\(condition.op.name) needs at least one value")
        }
        return problems.count == start ? Matcher(attribute: condition.attribute, test: test) : nil
    }

    private func comparison(_ op: Operator) -> Matcher.Comparison {
        switch op {
        case .lt, .semverLt: .lt
        case .lte, .semverLte: .lte
        case .gt, .semverGt: .gt
        case .gte, .semverGte: .gte
        default: .eq
        }
    }

    /// The index of a cohort a flag names, reporting a missing or broken one; `nil` when unusable.
    mutating func cohort(_ name: String, path: @autoclosure () -> String) -> Int? {
        guard let index = cohortIndex[name] else {
            report(path(), "unknown cohort '\(name)'")
            return nil
        }
        if let why = brokenCohorts[index] {
            // The cohort's own problem is reported at the cohort; here it only makes the flag unusable.
            flagBreakage = flagBreakage ?? "cohort '\(name)': \(why)"
            return nil
        }
        return index
    }
}

/// Flag keys, set names and cohort names: `^[a-z0-9][a-z0-9._-]{0,127}$`.
public func isValidKey(_ key: String) -> Bool {
    let utf8 = key.utf8
    guard (1...128).contains(utf8.count), let first = utf8.first else { return false }
    func isLowerOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
    guard isLowerOrDigit(first) else { return false }
    return utf8.allSatisfy {
        isLowerOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
}
