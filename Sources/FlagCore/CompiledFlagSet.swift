import Foundation

/// A flag set prepared for evaluation: cohorts resolved to indexes, operands parsed, regular expressions and
/// bucketing salts compiled once. Immutable and safe to share between threads.
///
/// Each flag is compiled on its own (`FlagEntry`), and the cohorts together (`CompiledCohorts`), so that
/// `updating(flags:cohorts:version:updatedAt:)` makes the next version compiling only what a change touches and
/// sharing everything else (`KeyedMap`).
///
/// ```swift
/// let compiled = CompiledFlagSet(try FlagSet.decode(bytes))
/// let detail = compiled.evaluate("new-checkout", default: false,
///                                context: EvaluationContext(unitID: "u-42"), at: Date())
/// ```
public final class CompiledFlagSet: Sendable {
    /// The set's name.
    public let name: String
    /// The set's version.
    public let version: Int
    /// When this version was made.
    public let updatedAt: Date?
    /// The document's schema number.
    public let schema: Int
    /// What the reader met that was not as this build writes it (`FlagSet.readProblems`).
    let readProblems: [Problem]
    /// Every flag, readable or not.
    let flags: KeyedMap<FlagEntry>
    let cohorts: CompiledCohorts
    /// The keys of the flags that name each cohort, whether the set has that cohort or not.
    let cohortUsers: [String: Set<String>]
    /// The keys of the flags that list each flag as a prerequisite, whether the set has that flag or not.
    let requiredBy: [String: Set<String>]
    /// How many flags have problems of their own, so that a valid set lists its problems without a walk.
    let flagsWithProblems: Int
    /// What numbers the flags that flags require, also for the flags `updating` compiles; `nil` leaves them
    /// unnumbered.
    let sessionSlots: SessionSlots?

    /// Compiles a set; never fails: problems are collected in `problems` and confined to the flags they touch.
    public convenience init(_ set: FlagSet) {
        self.init(set, sessionSlots: nil)
    }

    /// Compiles a set as `init(_:)` does, the flags that flags require numbered by `sessionSlots`: what a client
    /// compiles its sets with, so that a session finds what it froze for a required flag by that number.
    package convenience init(_ set: FlagSet, sessionSlots: SessionSlots?) {
        let cohorts = CompiledCohorts(models: set.cohorts, unreadable: set.unreadableCohorts, previous: nil)
        var entries: [(String, FlagEntry)] = []
        entries.reserveCapacity(set.flags.count + set.unreadableFlags.count)
        for (key, problems) in set.unreadableFlags where set.flags[key] == nil {
            entries.append((key, FlagEntry(key: key, unreadable: problems)))
        }
        let lookup = { (key: String) -> PrerequisiteGraph.Found in
            if let flag = set.flags[key] { return .readable(flag) }
            return set.unreadableFlags[key] == nil ? .missing : .unreadable
        }
        for (key, flag) in set.flags {
            let entry = FlagEntry(
                flag, cohorts: cohorts, prerequisiteProblems: PrerequisiteGraph.problems(of: flag, lookup: lookup),
                sessionSlots: sessionSlots)
            entries.append((key, entry))
        }
        var users: [String: Set<String>] = [:]
        var requiredBy: [String: Set<String>] = [:]
        for (key, entry) in entries {
            for name in entry.namedCohorts { users[name, default: []].insert(key) }
            for required in entry.requiredFlags { requiredBy[required, default: []].insert(key) }
        }
        self.init(
            name: set.name, version: set.version, updatedAt: set.updatedAt, schema: set.schema,
            readProblems: set.readProblems, flags: KeyedMap(entries), cohorts: cohorts, cohortUsers: users,
            requiredBy: requiredBy, flagsWithProblems: entries.count { !$0.1.problems.isEmpty },
            sessionSlots: sessionSlots)
    }

    init(
        name: String, version: Int, updatedAt: Date?, schema: Int, readProblems: [Problem], flags: KeyedMap<FlagEntry>,
        cohorts: CompiledCohorts, cohortUsers: [String: Set<String>], requiredBy: [String: Set<String>],
        flagsWithProblems: Int, sessionSlots: SessionSlots?
    ) {
        self.sessionSlots = sessionSlots
        self.requiredBy = requiredBy
        self.name = name
        self.version = version
        self.updatedAt = updatedAt
        self.schema = schema
        self.readProblems = readProblems
        self.flags = flags
        self.cohorts = cohorts
        self.cohortUsers = cohortUsers
        self.flagsWithProblems = flagsWithProblems
    }

    /// Every problem found in the set: what `lint` prints and what makes a write be rejected. A flag with a problem
    /// of its own (or in a cohort it uses) evaluates to the caller's default with `PARSE_ERROR`; every other flag
    /// evaluates normally. In document order: the reader's, the header's, the cohorts', then each flag's by key.
    public var problems: [Problem] {
        var problems =
            readProblems + Compiler.headerProblems(schema: schema, name: name, version: version) + cohorts.problems
        guard flagsWithProblems > 0 else { return problems }
        for (_, entry) in flags.entries.sorted(by: { utf8Less($0.key, $1.key) }) { problems += entry.problems }
        return problems
    }

    /// The set as a model; built on each call, from every flag and cohort.
    public var flagSet: FlagSet {
        var set = FlagSet(
            name: name, version: version, updatedAt: updatedAt, schema: schema, cohorts: cohorts.models, flags: [:])
        set.flags.reserveCapacity(flags.count)
        for (key, entry) in flags.entries {
            if let flag = entry.flag { set.flags[key] = flag } else { set.unreadableFlags[key] = entry.unreadable }
        }
        set.unreadableCohorts = cohorts.unreadable
        set.readProblems = readProblems
        return set
    }

    /// The flag `key`, if the set has it and could read it.
    public func flag(_ key: String) -> Flag? {
        flags[key]?.flag
    }

    /// The cohort `name`, if the set has it and could read it.
    public func cohort(_ name: String) -> Cohort? {
        cohorts.models[name]
    }

    /// The flags the set could read, in no particular order.
    public var readableFlags: [Flag] {
        flags.entries.compactMap(\.value.flag)
    }

    /// The keys of the flags that name the cohort `name` (in an override, a rule or an `in_cohort` condition),
    /// sorted.
    public func flags(using name: String) -> [String] {
        (cohortUsers[name] ?? []).sorted(by: utf8Less)
    }

    /// The keys of the flags that list the flag `key` as a prerequisite, sorted.
    public func flags(requiring key: String) -> [String] {
        (requiredBy[key] ?? []).sorted(by: utf8Less)
    }

    /// The names of the cohorts the set could read, in no particular order.
    public var cohortNames: [String] {
        Array(cohorts.models.keys)
    }

    /// How many flags the set has, readable or not.
    public var flagCount: Int { flags.count }

    /// Evaluates a flag for a caller expecting `Value`; never throws (SPEC §2).
    @inlinable
    public func evaluate<Value: FlagValue>(
        _ key: String, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<Value> {
        var detail = evaluate(key, type: Value.flagType, default: fallback.flagValue, context: context, at: now)
        return typed(&detail, default: fallback, key: key)
    }

    /// `detail` as a `Value`, or the fallback with `TYPE_MISMATCH` when the served value is not one.
    @inlinable
    func typed<Value: FlagValue>(
        _ detail: inout EvaluationDetail<JSONValue>, default fallback: Value, key: String
    ) -> EvaluationDetail<Value> {
        guard let value = Value(flagValue: detail.value) else {
            return EvaluationDetail(
                value: fallback, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(key)' served a value that is not a \(Value.flagType.name)", version: version)
        }
        return Self.retyped(&detail, value)
    }

    /// `detail` with `value` for its value, its optional strings moved rather than copied: copying them through
    /// the generic detail cost a retain, a release and a value-witness call each.
    @inlinable
    static func retyped<Value: Sendable>(
        _ detail: inout EvaluationDetail<JSONValue>, _ value: Value
    ) -> EvaluationDetail<Value> {
        EvaluationDetail(
            value: value, reason: detail.reason, variant: detail.variant.take(), errorCode: detail.errorCode.take(),
            errorMessage: detail.errorMessage.take(), version: detail.version)
    }

    /// Evaluates a flag for a caller expecting `type`, with `fallback` as the compiled-in default.
    public func evaluate(
        _ key: String, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        detail(outcome(FlagHandle(key), type: type, context: context, at: now), key: key, type: type, default: fallback)
    }

    /// Evaluates the flag a handle names for a caller expecting `Value`: no hashing of the key. Never throws.
    @inlinable
    public func evaluate<Value: FlagValue>(
        _ handle: FlagHandle, default fallback: Value, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<Value> {
        var detail = evaluate(handle, type: Value.flagType, default: fallback.flagValue, context: context, at: now)
        return typed(&detail, default: fallback, key: handle.key)
    }

    /// Evaluates the flag a handle names for a caller expecting `type`: no hashing of the key. Never throws.
    public func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext, at now: Date
    ) -> EvaluationDetail<JSONValue> {
        detail(
            outcome(handle, type: type, context: context, at: now), key: handle.key, type: type, default: fallback)
    }

    /// Evaluates the flag a handle names for a caller expecting `type`, reading the time from `now` only when the
    /// flag's value can depend on it (an expiry, an override with an end, a scheduled rollout). Never throws.
    public func evaluate(
        _ handle: FlagHandle, type: FlagType, default fallback: JSONValue, context: EvaluationContext,
        clock now: () -> Date
    ) -> EvaluationDetail<JSONValue> {
        detail(
            outcome(handle, type: type, context: context, clock: now), key: handle.key, type: type, default: fallback)
    }

    /// Evaluates like `evaluate` and also returns each step considered, for `flagctl eval --explain`.
    public func explain(
        _ key: String, type: FlagType? = nil, default fallback: JSONValue? = nil, context: EvaluationContext,
        at now: Date
    ) -> (detail: EvaluationDetail<JSONValue>, steps: [String]) {
        var steps: [String] = []
        let position = flags.position(of: key, hash: ByteHash.hash(key))
        let flagType: FlagType
        if let type {
            flagType = type
        } else if let position, case let program = flags[position].program, program.flags[0].state == .ready {
            flagType = program.types[program.flags[0].type]
        } else {
            flagType = .json
        }
        let outcome =
            position.map {
                flags[$0].program.resolve(
                    type: flagType, context: context, at: now.timeIntervalSince1970, cohorts: cohorts.program,
                    position: $0, set: self, trace: { steps.append($0) })
            } ?? .missing
        let detail = detail(outcome, key: key, type: flagType, default: fallback ?? .null)
        if let message = detail.errorMessage { steps.append(message) }
        return (detail, steps)
    }
}

/// One flag of a compiled set: its model (or why the reader could not read it), its own problems, the cohorts it
/// names and its program. Compiled once and shared by every later version the flag does not change in.
final class FlagEntry: Sendable {
    /// The flag; `nil` for a flag the reader could not read.
    let flag: Flag?
    /// Why the reader could not read it; empty for a readable flag.
    let unreadable: [Problem]
    /// Its own problems (a broken cohort it uses is the cohort's problem).
    let problems: [Problem]
    /// Every cohort name it uses, whether the set has that cohort or not.
    let namedCohorts: Set<String>
    /// The problems of its prerequisites in the set (`PrerequisiteGraph`), also among `problems`.
    let prerequisiteProblems: [Problem]
    let program: Program

    /// `flag` compiled against `cohorts`; `prerequisiteProblems` (its prerequisites' problems in the set) break it
    /// as its own problems do; `sessionSlots` number the flags it requires.
    init(_ flag: Flag, cohorts: CompiledCohorts, prerequisiteProblems: [Problem], sessionSlots: SessionSlots?) {
        var compiler = Compiler(cohorts: cohorts)
        var compiled = compiler.compile(flag)
        if compiler.problems.isEmpty, let first = prerequisiteProblems.first { compiled = .broken(first.description) }
        self.flag = flag
        self.unreadable = []
        self.problems = compiler.problems + prerequisiteProblems
        self.prerequisiteProblems = prerequisiteProblems
        self.namedCohorts = flag.cohortNames
        self.program = Program(ProgramBuilder(flag: compiled, key: flag.key, sessionSlots: sessionSlots))
    }

    /// The keys of the flags it lists as prerequisites.
    var requiredFlags: [String] { flag?.prerequisites.map(\.flag) ?? [] }

    /// A flag the reader could not read: it evaluates to the caller's default with `PARSE_ERROR`.
    init(key: String, unreadable problems: [Problem]) {
        self.flag = nil
        self.unreadable = problems
        self.problems = []
        self.prerequisiteProblems = []
        self.namedCohorts = []
        self.program = Program(
            ProgramBuilder(flag: .broken(problems.first?.message ?? "it could not be read"), key: key))
    }
}
