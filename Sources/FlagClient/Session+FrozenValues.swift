import FlagCore

/// A session's frozen evaluations, indexed by `FlagKey.slot`.
///
/// A plain array of values: a frozen read is a bounds check and an index, freezing a flag allocates nothing of its
/// own, and the array is as long as the largest slot the session holds (the slots of the flags the process reads
/// first are the smallest).
struct FrozenValues: Sendable {
    /// An evaluation, and the case an enum key's read found in it (`EnumCases.match`). Beside the evaluation rather
    /// than in it: a larger `Evaluation`, copied on every key's first read, made each of them dearer.
    private struct Frozen {
        var evaluation: Evaluation
        var enumCase: EnumCase?
    }

    private var evaluations: [Frozen?] = []

    /// The persisted evaluations of a resumed session, by flag name.
    init(_ details: [String: EvaluationDetail<JSONValue>]) {
        for (name, detail) in details {
            self[FlagSlots.slot(for: name)] = Evaluation(detail: detail)
        }
    }

    /// The evaluation frozen in `slot`; setting one replaces it, and forgets the case an enum key found in the one
    /// before (values are never removed).
    subscript(slot: Int) -> Evaluation? {
        get { slot < evaluations.count ? evaluations[slot]?.evaluation : nil }
        set {
            grow(to: slot)
            evaluations[slot] = newValue.map { Frozen(evaluation: $0) }
        }
    }

    /// Freezes `evaluation` in `slot`, with `enumCase`, the case an enum key found in it, beside it.
    @inline(__always)
    mutating func freeze(_ evaluation: Evaluation, case enumCase: EnumCase?, at slot: Int) {
        grow(to: slot)
        evaluations[slot] = Frozen(evaluation: evaluation, enumCase: enumCase)
    }

    /// Keeps `decoded`, the decoding of `served`, beside the evaluation in `slot` while it still serves `served`
    /// (a kill may have replaced it since `served` was read) and none is kept yet.
    mutating func keep(_ decoded: Evaluation.Decoded, decoding served: JSONValue, at slot: Int) {
        guard let evaluation = self[slot], evaluation.decoded == nil, evaluation.served == served else { return }
        self[slot] = evaluation.decoding(decoded)
    }

    /// Makes `slot` an index of the array: in one allocation however far it lies past the end, and at least doubling
    /// a capacity that is too small, so that a session reading flag after flag in slot order does not reallocate at
    /// each.
    private mutating func grow(to slot: Int) {
        guard slot >= evaluations.count else { return }
        if slot >= evaluations.capacity {
            evaluations.reserveCapacity(Swift.max(slot + 1, 2 * evaluations.capacity))
        }
        while slot >= evaluations.count { evaluations.append(nil) }
    }

    /// The value frozen in `slot`, `fallback` where the caller's default is due; `nil` when the flag is not frozen,
    /// or holds a kill value no read has served yet (its first read counts: `isUncountedKill`). Reads the fields in
    /// place: a frozen read copies no other field of the evaluation. Always inlined: it is the frozen read, and the
    /// optimizer stopped inlining it by itself when the `uncounted` check came in.
    @inline(__always)
    func value(at slot: Int, default fallback: JSONValue) -> JSONValue? {
        guard slot < evaluations.count, evaluations[slot] != nil, evaluations[slot]?.evaluation.uncounted == false
        else {
            return nil
        }
        return evaluations[slot]?.evaluation.served ?? fallback
    }

    /// The index among `cases` of the case frozen in `slot`, when a read through a key with those cases found it (a
    /// kill since, waiting for its first read or not, replaced it); `nil` otherwise. Compares the cases by identity,
    /// in place: two keys of one flag may have different cases. The slot holds the cases it names, so no other object
    /// can have their identity while it does.
    @inline(__always)
    func caseIndex(at slot: Int, of cases: Unmanaged<EnumCases>) -> Int? {
        guard slot < evaluations.count, let found = evaluations[slot]?.enumCase,
            Unmanaged.passUnretained(found.cases).toOpaque() == cases.toOpaque()
        else { return nil }
        return found.index
    }

    /// Whether an evaluation is frozen in `slot`.
    func isFrozen(at slot: Int) -> Bool {
        slot < evaluations.count && evaluations[slot] != nil
    }

    /// Whether `slot` holds a kill value no read has served yet (`Evaluation.uncounted`).
    func isUncountedKill(at slot: Int) -> Bool {
        slot < evaluations.count && evaluations[slot]?.evaluation.uncounted == true
    }

    /// What the session froze for a flag that another flag requires, as that flag sees it: what it serves now (a
    /// kill's value, once a kill replaced it), the caller's default, or not read yet. Found by `slot`, the number the
    /// set gave it when it was compiled; by its `key` in a set compiled without (`PrerequisiteLookup`).
    func prerequisite(slot: Int, key: () -> String) -> FrozenPrerequisite {
        guard let slot = slot >= 0 ? slot : FlagSlots.existingSlot(for: key()),
            let evaluation = self[slot]
        else { return .notFrozen }
        return evaluation.served.map { .served($0) } ?? .nothing
    }

    /// How many flags are frozen.
    var count: Int { evaluations.lazy.filter { $0 != nil }.count }
}
