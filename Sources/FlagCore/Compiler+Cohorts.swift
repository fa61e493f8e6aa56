import Foundation

/// The cohorts of one version of a set, checked and compiled together (`in_cohort` links them): their problems,
/// why each broken one cannot be evaluated, and the program in which every flag's cohort tests run.
///
/// Flags refer to a cohort by its index in `program`. A full compile numbers the cohorts in name order; an update
/// keeps the index of every cohort it does not remove and numbers new ones after the highest, so that the flags
/// compiled before stay valid. A removed cohort's index stays taken (its record matches nobody and no flag can name
/// it) until the indexes are renumbered, when more than half of them are such leftovers.
final class CompiledCohorts: Sendable {
    /// The readable cohorts, by name.
    let models: [String: Cohort]
    /// The cohorts the reader could not read, with why.
    let unreadable: [String: [Problem]]
    /// The index of each cohort the set has, by name.
    let slots: [String: Int]
    /// The name of each index; a leftover index keeps the name it had.
    let names: [String]
    /// Why each cohort that cannot be evaluated cannot, by index.
    let broken: [Int: String]
    /// The problems of the cohorts: each cohort's own, in name order, then cycles and nesting.
    let problems: [Problem]
    /// The cohorts' records, by index.
    let program: Program

    /// Compiles `models` (and records `unreadable`), keeping the indexes of `previous` where it can.
    init(models: [String: Cohort], unreadable: [String: [Problem]], previous: CompiledCohorts?) {
        let (slots, names) = Self.number(Set(models.keys).union(unreadable.keys), previous: previous)
        var compiler = Compiler(cohortIndex: slots, cohortNames: names)
        let compiled = compiler.compileCohorts(models, unreadable: unreadable, order: Self.ordered(slots))
        self.models = models
        self.unreadable = unreadable
        self.slots = slots
        self.names = names
        self.broken = compiler.brokenCohorts
        self.problems = compiler.problems
        self.program = Program(ProgramBuilder(cohorts: compiled))
    }

    /// The indexes of a set with `present` cohorts: those of `previous` kept, new names after them; renumbered in
    /// name order when there is no `previous` or more than half of the indexes would be leftovers.
    private static func number(_ present: Set<String>, previous: CompiledCohorts?) -> ([String: Int], [String]) {
        guard let previous, previous.names.count < 2 * present.count + 16 else {
            let names = present.sorted(by: utf8Less)
            return (Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) }), names)
        }
        var slots = previous.slots.filter { present.contains($0.key) }
        var names = previous.names
        for name in present.subtracting(slots.keys).sorted(by: utf8Less) {
            slots[name] = names.count
            names.append(name)
        }
        return (slots, names)
    }

    /// The indexes of `slots` in the order of their names.
    private static func ordered(_ slots: [String: Int]) -> [Int] {
        slots.sorted { utf8Less($0.key, $1.key) }.map(\.value)
    }

    /// Whether the cohorts are numbered as in `other`: flags compiled against one are valid against the other.
    func sharesIndexes(with other: CompiledCohorts) -> Bool {
        other.names.count >= names.count && other.names[..<names.count].elementsEqual(names)
    }

    /// Why the cohort `name` cannot be evaluated; `nil` when it can, or when the set has no such cohort.
    func whyBroken(_ name: String) -> String? {
        slots[name].flatMap { broken[$0] }
    }
}

extension Compiler {
    /// Checks and compiles every cohort, then the links between them; returns the compiled cohorts by index
    /// (leftover indexes get a cohort that matches nobody).
    mutating func compileCohorts(
        _ models: [String: Cohort], unreadable: [String: [Problem]], order: [Int]
    ) -> [CompiledCohort] {
        var cohorts = [CompiledCohort](
            repeating: CompiledCohort(include: [], exclude: [], groups: []), count: cohortNames.count)
        var dependencies = [[Int]](repeating: [], count: cohortNames.count)
        for index in order {
            let name = cohortNames[index]
            guard let cohort = models[name] else {
                brokenCohorts[index] = "cohort '\(name)' could not be read"
                continue
            }
            (cohorts[index], dependencies[index]) = compile(cohort, name: name, index: index)
        }
        markCycles(dependencies, order: order)
        return cohorts
    }

    private mutating func compile(_ cohort: Cohort, name: String, index: Int) -> (CompiledCohort, uses: [Int]) {
        let path = "cohorts.\(name)"
        let start = problems.count
        if !isValidKey(name) { report(path, "'\(name)' is not a valid cohort name: \(Self.keyRule)") }
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
    /// evaluate, and marks every cohort that reaches a broken one as broken. The walk starts from the cohorts in
    /// `order` (by name), so that the reports do not depend on how the cohorts are numbered. Iterative and linear
    /// in practice, so that a chain of thousands of cohorts can neither exhaust the stack nor the memory here.
    private mutating func markCycles(_ dependencies: [[Int]], order: [Int]) {
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

        for root in order where marks[root] == .unvisited {
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
}
