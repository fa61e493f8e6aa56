import Foundation

/// One flag, or the cohorts of a set, flattened for evaluation: every rule, condition, cohort and rollout is a
/// plain record in a table, and records refer to one another by index. Evaluation walks these tables with plain
/// loads: no class references to retain and release, no existential boxes, no dictionary of strings.
/// Reference-counted things (served values, names, regular expressions, pre-release versions) sit in side tables
/// that only the step that serves or needs them reads.
///
/// A flag's program holds its one `FlagRecord` at index 0; the set's cohort program (`CompiledCohorts`) holds the
/// cohorts, which a flag's records name by index. One program per flag is what lets a change recompile only the
/// flags it touches. Built by `ProgramBuilder` from what `Compiler` validated; immutable afterwards.
final class Program: @unchecked Sendable {
    // @unchecked Sendable is safe: every table is written once in `init` and only read afterwards; `deinit` frees
    // them when no evaluation can hold the program any more.
    let flags: Table<FlagRecord>
    let rules: Table<RuleRecord>
    let conditions: Table<ConditionRecord>
    /// A cohort group is a range of `conditions`.
    let groups: Table<Span>
    let cohorts: Table<CohortRecord>
    let unitSets: Table<SetRecord>
    let unitSlots: Table<KeySlot>
    let forced: Table<ForcedRecord>
    let cohortForced: Table<CohortForcedRecord>
    let rollouts: Table<RolloutRecord>
    let steps: Table<StepRecord>
    let splits: Table<SplitRecord>
    let arms: Table<ArmRecord>
    let prerequisites: Table<PrerequisiteRecord>
    /// UTF-8 bytes of flag keys, unit ids and string operands.
    let bytes: Table<UInt8>
    let stringOperands: Table<ByteSpan>
    let numberOperands: Table<Double>
    let versionOperands: Table<VersionRecord>
    let cohortOperands: Table<Int32>
    // Side tables, read only by the step that needs them.
    let values: Table<JSONValue>
    let names: Table<String>
    let fullVersions: Table<SemanticVersion>
    let patterns: Table<Pattern>
    let types: Table<FlagType>

    init(_ builder: ProgramBuilder) {
        flags = Table(builder.flags)
        rules = Table(builder.rules)
        conditions = Table(builder.conditions)
        groups = Table(builder.groups)
        cohorts = Table(builder.cohorts)
        unitSets = Table(builder.unitSets)
        unitSlots = Table(builder.unitSlots)
        forced = Table(builder.forced)
        cohortForced = Table(builder.cohortForced)
        rollouts = Table(builder.rollouts)
        steps = Table(builder.steps)
        splits = Table(builder.splits)
        arms = Table(builder.arms)
        prerequisites = Table(builder.prerequisites)
        bytes = Table(builder.bytes)
        stringOperands = Table(builder.stringOperands)
        numberOperands = Table(builder.numberOperands)
        versionOperands = Table(builder.versionOperands)
        cohortOperands = Table(builder.cohortOperands)
        values = Table(builder.values)
        names = Table(builder.names)
        fullVersions = Table(builder.fullVersions)
        patterns = Table(builder.patterns)
        types = Table(builder.types)
    }

    deinit {
        flags.free()
        rules.free()
        conditions.free()
        groups.free()
        cohorts.free()
        unitSets.free()
        unitSlots.free()
        forced.free()
        cohortForced.free()
        rollouts.free()
        steps.free()
        splits.free()
        arms.free()
        prerequisites.free()
        bytes.free()
        stringOperands.free()
        numberOperands.free()
        versionOperands.free()
        cohortOperands.free()
        values.free()
        names.free()
        fullVersions.free()
        patterns.free()
        types.free()
    }
}

extension Program {
    /// Variant names every program holds at the start of `names`, so that an `Outcome` names them by index.
    enum FixedName: Int32, CaseIterable {
        case kill, expired, override, rollout, `default`

        var text: String {
            switch self {
            case .kill: "kill"
            case .expired: "expired"
            case .override: "override"
            case .rollout: "rollout"
            case .default: "default"
            }
        }
    }
}

/// An immutable array in memory its `Program` owns and frees. Reads are plain loads without a bounds check:
/// every index stored in a record was produced by `ProgramBuilder` for the table it indexes.
struct Table<Element>: @unchecked Sendable {
    // @unchecked Sendable is safe: the memory is initialized once in `init` and never written afterwards.
    let base: UnsafeMutablePointer<Element>
    let count: Int

    init(_ elements: [Element]) {
        count = elements.count
        // An empty table (most of a flag's) allocates nothing: its pointer is never read.
        guard count > 0 else {
            base = UnsafeMutablePointer(bitPattern: MemoryLayout<Element>.alignment)!
            return
        }
        base = UnsafeMutablePointer.allocate(capacity: count)
        elements.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
        }
    }

    @inline(__always)
    subscript(index: Int32) -> Element { base[Int(index)] }

    @inline(__always)
    subscript(index: Int) -> Element { base[index] }

    func free() {
        guard count > 0 else { return }
        base.deinitialize(count: count)
        base.deallocate()
    }
}

/// A range of a table: `start..<start + count`.
struct Span: Sendable {
    var start: Int32
    var count: Int32

    static let empty = Span(start: 0, count: 0)

    var end: Int32 { start &+ count }
}

/// A range of `Program.bytes`.
struct ByteSpan: Sendable {
    var start: Int32
    var count: Int32
}

/// One slot of an open-addressing table from bytes (a flag key or a unit id) to an index.
struct KeySlot: Sendable {
    var hash: UInt64 = 0
    var key = ByteSpan(start: 0, count: 0)
    /// What the key maps to; -1 marks an empty slot.
    var target: Int32 = -1
}

/// A set (or map) of unit ids: a power-of-two run of `Program.unitSlots`.
struct SetRecord: Sendable {
    var start: Int32
    var mask: Int32
}

struct FlagRecord: Sendable {
    enum State: UInt8, Sendable { case ready, archived, broken }

    var key: ByteSpan
    var state: State
    /// The index in `Program.types`; a broken flag's message is `names[message]`.
    var type: Int32
    var message: Int32 = -1
    /// `FlagTypeCode` of a ready flag.
    var typeCode: UInt8 = 0
    var killed = false
    var defaultIsStatic = false
    /// Seconds since 1970; `.infinity` when the flag never expires.
    var expiresAt = Double.infinity
    var killValue: Int32 = -1
    var expiredValue: Int32 = -1
    var defaultValue: Int32 = -1
    /// A `SetRecord` mapping unit ids to `forced` records; -1 when the flag has no unit override.
    var unitOverrides: Int32 = -1
    var cohortOverrides = Span.empty
    var rules = Span.empty
    var rollout: Int32 = -1
    /// A range of `prerequisites`.
    var prerequisites = Span.empty
}

/// Flag types as small numbers, so that the type check compares bytes.
enum FlagTypeCode {
    static func of(_ type: FlagType) -> UInt8 {
        switch type {
        case .bool: 1
        case .int: 2
        case .double: 3
        case .string: 4
        case .json: 5
        case .unknown: 0
        }
    }
}

struct ForcedRecord: Sendable {
    var value: Int32
    /// Seconds since 1970; `.infinity` for an override without end.
    var until: Double
}

struct CohortForcedRecord: Sendable {
    var cohort: Int32
    /// The cohort's name in `names`, and the variant `override:NAME`.
    var name: Int32
    var variant: Int32
    var value: Int32
    var until: Double
}

/// A flag the program's flag requires: its key (in `names`, also the variant of a failure), the key's hash and its
/// `SessionSlots` number (-1 without), and the values it must serve (a range of `values`).
struct PrerequisiteRecord: Sendable {
    var name: Int32
    var hash: UInt64
    var slot: Int32
    var values: Span
}

struct RuleRecord: Sendable {
    enum Serve: UInt8, Sendable { case value, rollout, split }

    var name: Int32
    /// The cohort the rule targets, or -1 when it has inline conditions.
    var cohort: Int32
    var conditions: Span
    var serve: Serve
    /// A value, rollout or split index, by `serve`.
    var target: Int32
}

struct ConditionRecord: Sendable {
    enum Kind: UInt8, Sendable {
        case equals, equalsNone, contains, startsWith, endsWith, matches, number, semver, instant
        case exists, notExists, inCohort
    }

    var kind: Kind
    var comparison: Matcher.Comparison
    var isUnitID: Bool
    /// The attribute's name as a key, and in `names`.
    var attributeKey: AttributeKey
    var attribute: Int32
    /// The operands, in the table `kind` reads: strings, numbers, versions, patterns or cohorts.
    var operands: Span
}

struct CohortRecord: Sendable {
    /// `SetRecord`s of the listed unit ids; -1 when the list is empty.
    var include: Int32
    var exclude: Int32
    /// A range of `Program.groups`.
    var groups: Span
}

struct RolloutRecord: Sendable {
    /// The hash state after `salt + ":"`; `salt` numbers the distinct salts of the set (for the bucket cache).
    var primed: Murmur3Hasher
    var salt: Int32
    var value: Int32
    /// A fixed threshold, or -1 for a schedule in `steps`.
    var fixed: Int32
    var steps: Span
    /// Seconds since 1970; `.infinity` when not paused.
    var pausedAt: Double
}

struct StepRecord: Sendable {
    var at: Double
    var threshold: Int32
}

struct SplitRecord: Sendable {
    var primed: Murmur3Hasher
    var salt: Int32
    var arms: Span
}

struct ArmRecord: Sendable {
    /// The first bucket past this arm.
    var bound: Int32
    var name: Int32
    var value: Int32
}

/// A semver operand: its plain `MAJOR.MINOR.PATCH` numbers when it has them, and the full version in
/// `Program.fullVersions`.
struct VersionRecord: Sendable {
    var plain: PlainVersion?
    var full: Int32
}
