import Foundation

/// How a flag evaluates, prepared once per set.
enum CompiledFlag: Sendable {
    case ready(FlagPlan)
    case archived
    /// The flag (or a cohort it uses) has a problem; it serves the caller's default with `PARSE_ERROR`.
    case broken(String)
}

/// A validated flag as the compiler builds it; `ProgramBuilder` lowers it into the flat records evaluation reads.
final class FlagPlan: Sendable {
    struct Forced: Sendable {
        let value: JSONValue
        let until: Double?
    }

    struct CohortForced: Sendable {
        let cohort: Int
        let name: String
        let value: JSONValue
        let until: Double?
    }

    final class Rule: Sendable {
        enum Target: Sendable {
            case cohort(Int)
            case conditions([Matcher])
        }
        enum Serve: Sendable {
            case value(JSONValue)
            case rollout(CompiledRollout)
            case split(CompiledSplit)
        }
        let name: String
        let target: Target
        let serve: Serve

        init(name: String, target: Target, serve: Serve) {
            self.name = name
            self.target = target
            self.serve = serve
        }
    }

    let type: FlagType
    let killed: Bool
    let killValue: JSONValue
    let expiresAt: Double?
    let expiredValue: JSONValue
    /// Unit id → its first override; `nil` when the flag has none (no hashing on the hot path).
    let unitOverrides: [String: Forced]?
    let cohortOverrides: [CohortForced]
    let rules: [Rule]
    let rollout: CompiledRollout?
    let defaultValue: JSONValue
    let defaultReason: Reason

    init(
        type: FlagType, killed: Bool, killValue: JSONValue, expiresAt: Double?, expiredValue: JSONValue,
        unitOverrides: [String: Forced]?, cohortOverrides: [CohortForced], rules: [Rule], rollout: CompiledRollout?,
        defaultValue: JSONValue, defaultReason: Reason
    ) {
        self.type = type
        self.killed = killed
        self.killValue = killValue
        self.expiresAt = expiresAt
        self.expiredValue = expiredValue
        self.unitOverrides = unitOverrides
        self.cohortOverrides = cohortOverrides
        self.rules = rules
        self.rollout = rollout
        self.defaultValue = defaultValue
        self.defaultReason = defaultReason
    }
}

final class CompiledRollout: Sendable {
    let bucketer: Bucketer
    let value: JSONValue
    /// A fixed threshold, or the schedule's steps as (seconds, threshold).
    let fixed: Int?
    let steps: [(at: Double, threshold: Int)]
    let pausedAt: Double?

    init(bucketer: Bucketer, value: JSONValue, fixed: Int?, steps: [(at: Double, threshold: Int)], pausedAt: Double?) {
        self.bucketer = bucketer
        self.value = value
        self.fixed = fixed
        self.steps = steps
        self.pausedAt = pausedAt
    }
}

final class CompiledSplit: Sendable {
    let bucketer: Bucketer
    /// Cumulative upper bounds of each arm's bucket range.
    let bounds: [Int]
    let arms: [(name: String, value: JSONValue)]

    init(bucketer: Bucketer, bounds: [Int], arms: [(name: String, value: JSONValue)]) {
        self.bucketer = bucketer
        self.bounds = bounds
        self.arms = arms
    }
}

final class CompiledCohort: Sendable {
    let include: Set<String>
    let exclude: Set<String>
    let groups: [[Matcher]]

    init(include: Set<String>, exclude: Set<String>, groups: [[Matcher]]) {
        self.include = include
        self.exclude = exclude
        self.groups = groups
    }
}

/// Walks a set once: checks everything SPEC §3 requires of a write and builds the evaluation plan.
/// Problems are both reported (validation) and confined to the flags they touch (evaluation).
struct Compiler {
    let set: FlagSet
    var problems: [Problem] = []
    private var cohortIndex: [String: Int] = [:]
    var cohortNames: [String] = []
    /// Cohorts that cannot be evaluated (their own problem, a cycle, or a broken cohort they use), with why.
    var brokenCohorts: [Int: String] = [:]
    /// For a cohort broken because it uses a broken one: the cohort whose own fault it is. Messages name that root
    /// instead of nesting every link, which made them grow with the chain (quadratic memory: 24 GB for 50,000).
    private var brokenRoots: [Int: Int] = [:]

    init(set: FlagSet) {
        self.set = set
    }

    mutating func run() -> ([String: CompiledFlag], [CompiledCohort]) {
        problems = set.readProblems
        checkHeader()
        cohortNames = (Array(set.cohorts.keys) + Array(set.unreadableCohorts.keys)).sorted(by: utf8Less)
        for (index, name) in cohortNames.enumerated() { cohortIndex[name] = index }
        var cohorts: [CompiledCohort] = []
        var dependencies: [[Int]] = []
        for (index, name) in cohortNames.enumerated() {
            guard let cohort = set.cohorts[name] else {
                brokenCohorts[index] = "cohort '\(name)' could not be read"
                cohorts.append(CompiledCohort(include: [], exclude: [], groups: []))
                dependencies.append([])
                continue
            }
            let (compiled, uses) = compile(cohort, name: name, index: index)
            cohorts.append(compiled)
            dependencies.append(uses)
        }
        markCycles(dependencies)
        var flags: [String: CompiledFlag] = [:]
        flags.reserveCapacity(set.flags.count + set.unreadableFlags.count)
        for (key, problems) in set.unreadableFlags {
            flags[key] = .broken(problems.first?.message ?? "it could not be read")
        }
        for key in set.flags.keys.sorted(by: utf8Less) {
            guard let flag = set.flags[key] else { continue }
            flags[key] = compile(flag)
        }
        return (flags, cohorts)
    }

    // MARK: - Set and keys

    private mutating func checkHeader() {
        if set.schema > FlagSet.currentSchema {
            report("schema", "schema \(set.schema) is newer than this build understands (\(FlagSet.currentSchema))")
        } else if set.schema < 1 {
            report("schema", "schema must be 1 or more, not \(set.schema)")
        }
        if !isValidKey(set.name) {
            report("set", "'\(set.name)' is not a valid set name: \(keyRule)")
        }
        if set.version < 0 { report("version", "must be 0 or more, not \(set.version)") }
    }

    let keyRule = "1–128 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit"

    mutating func report(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }

    // MARK: - Cohorts

    private mutating func compile(_ cohort: Cohort, name: String, index: Int) -> (CompiledCohort, uses: [Int]) {
        let path = "cohorts.\(name)"
        let start = problems.count
        if !isValidKey(name) { report(path, "'\(name)' is not a valid cohort name: \(keyRule)") }
        var uses: [Int] = []
        var groups: [[Matcher]] = []
        for (groupIndex, group) in cohort.groups.enumerated() {
            var matchers: [Matcher] = []
            for (conditionIndex, condition) in group.enumerated() {
                func conditionPath() -> String { "\(path).groups[\(groupIndex)][\(conditionIndex)]" }
                if let matcher = compile(condition, path: conditionPath()) {
                    uses += matcher.cohorts
                    matchers.append(matcher)
                }
            }
            groups.append(matchers)
        }
        if problems.count > start { brokenCohorts[index] = problems[start].description }
        let compiled = CompiledCohort(include: Set(cohort.include), exclude: Set(cohort.exclude), groups: groups)
        return (compiled, uses)
    }

    /// How deep `in_cohort` may nest below a cohort: evaluation recurses once per level.
    static let maximumCohortDepth = 32
    /// How many cohort checks one cohort may cost in the worst case, every `in_cohort` reference counted (a cohort
    /// named twice is checked twice): without a bound, 40 cohorts naming the next one twice take 2^40 checks.
    static let maximumCohortExpansion = 1_000

    /// Reports `in_cohort` cycles (one report for cycles that share a cohort), and nesting too deep or too costly to
    /// evaluate, and marks every cohort that reaches a broken one as broken. Iterative and linear in practice, so
    /// that a chain of thousands of cohorts can neither exhaust the stack nor the memory here.
    private mutating func markCycles(_ dependencies: [[Int]]) {
        enum Mark { case unvisited, visiting, done }
        var marks = Array(repeating: Mark.unvisited, count: dependencies.count)
        var depth = Array(repeating: 0, count: dependencies.count)
        var expansion = Array(repeating: 1, count: dependencies.count)
        // The depth-first path: each cohort on it, with the index of the dependency being followed.
        var path: [(node: Int, edge: Int)] = []
        var inCycle: Set<Int> = []

        /// Done with `node → next`: inherit `next`'s breakage and size, then move to `node`'s next dependency.
        func finishEdge(_ compiler: inout Compiler) {
            guard let (node, edge) = path.last else { return }
            let next = dependencies[node][edge]
            if marks[next] == .done {
                depth[node] = max(depth[node], depth[next] + 1)
                expansion[node] = min(expansion[node] + expansion[next], Self.maximumCohortExpansion + 1)
            }
            if compiler.brokenCohorts[next] != nil, compiler.brokenCohorts[node] == nil {
                compiler.markBroken(node, using: next)
            }
            path[path.count - 1].edge += 1
        }

        for root in dependencies.indices where marks[root] == .unvisited {
            marks[root] = .visiting
            path.append((root, 0))
            while let (node, edge) = path.last {
                guard edge < dependencies[node].count else {
                    path.removeLast()
                    marks[node] = .done
                    checkSize(of: node, depth: depth[node], expansion: expansion[node])
                    finishEdge(&self)
                    continue
                }
                let next = dependencies[node][edge]
                switch marks[next] {
                case .unvisited:
                    marks[next] = .visiting
                    path.append((next, 0))
                    continue
                case .visiting where inCycle.contains(node) || inCycle.contains(next):
                    // A cycle through a cohort already in a reported one: its members get broken through that one
                    // (they all use `node`), and reporting it too would cost a walk of the path per edge.
                    break
                case .visiting:
                    let cycleStart = path.lastIndex { $0.node == next } ?? 0
                    let members = path[cycleStart...].map(\.node)
                    let cycle = Self.describeCycle((members + [next]).map { cohortNames[$0] })
                    report("cohorts.\(cohortNames[node])", "in_cohort cycle: \(cycle)")
                    for member in members {
                        brokenCohorts[member] = "in_cohort cycle: \(cycle)"
                        brokenRoots[member] = nil
                        inCycle.insert(member)
                    }
                case .done: break
                }
                finishEdge(&self)
            }
        }
    }

    /// `a → b → c → a`; a long cycle keeps its first and last names, so a message stays short.
    static func describeCycle(_ names: [String]) -> String {
        guard names.count > 10 else { return names.joined(separator: " → ") }
        let middle = "… \(names.count - 8) more …"
        return (names.prefix(5) + [middle] + names.suffix(3)).joined(separator: " → ")
    }

    /// Marks `node` broken because the cohort `next` it uses is, naming the root cause without nesting messages.
    private mutating func markBroken(_ node: Int, using next: Int) {
        let root = brokenRoots[next] ?? next
        let why = brokenCohorts[root] ?? "cannot be evaluated"
        let through = root == next ? "" : "leads to cohort '\(cohortNames[root])', which "
        brokenCohorts[node] = "uses cohort '\(cohortNames[next])', which \(through)\(why)"
        brokenRoots[node] = root
    }

    /// Reports a cohort (not already broken) that nests `in_cohort` too deep or expands to too many checks.
    private mutating func checkSize(of node: Int, depth: Int, expansion: Int) {
        guard brokenCohorts[node] == nil else { return }
        let why: String
        if depth > Self.maximumCohortDepth {
            why = "nests in_cohort \(depth) levels deep (at most \(Self.maximumCohortDepth))"
        } else if expansion > Self.maximumCohortExpansion {
            why = "expands through in_cohort to more than \(Self.maximumCohortExpansion) cohort checks per evaluation"
        } else {
            return
        }
        report("cohorts.\(cohortNames[node])", why)
        brokenCohorts[node] = why
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
        case .unknown(let name):
            report(
                "\(path()).op",
                "unknown operator '\(name)' (this build knows \(Operator.known.map(\.name).joined(separator: ", ")))")
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

    /// Why the flag being compiled cannot be evaluated, when a cohort it uses is broken.
    var flagBreakage: String?
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
