import FlagCore

/// A session's frozen evaluations, indexed by `FlagKey.slot`.
///
/// A plain array of values: a frozen read is a bounds check and an index, freezing a flag allocates nothing of its
/// own, and the array is as long as the largest slot the session holds (the slots of the flags the process reads
/// first are the smallest).
struct FrozenValues: Sendable {
    private var evaluations: [Evaluation?] = []

    /// The persisted evaluations of a resumed session, by flag name.
    init(_ details: [String: EvaluationDetail<JSONValue>]) {
        for (name, detail) in details {
            self[FlagSlots.slot(for: name)] = Evaluation(detail: detail)
        }
    }

    /// The evaluation frozen in `slot`; setting one replaces it (values are never removed).
    subscript(slot: Int) -> Evaluation? {
        get { slot < evaluations.count ? evaluations[slot] : nil }
        set {
            grow(to: slot)
            evaluations[slot] = newValue
        }
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
        guard slot < evaluations.count, evaluations[slot] != nil, evaluations[slot]?.uncounted == false else {
            return nil
        }
        return evaluations[slot]?.served ?? fallback
    }

    /// The index among the cases of the `EnumCases` identified by `cases` of the case frozen in `slot`, when a read
    /// through a key with those cases froze it and a frozen read serves it (no kill value waiting for its first read);
    /// `nil` otherwise. Compares the cases by identity, in place: two keys of one flag may have different cases. The
    /// evaluation holds its cases, so no other object can have their identity while it is frozen.
    @inline(__always)
    func caseIndex(at slot: Int, of cases: ObjectIdentifier) -> Int? {
        guard slot < evaluations.count, let frozen = evaluations[slot]?.enumCase?.cases,
            ObjectIdentifier(frozen) == cases,
            evaluations[slot]?.uncounted == false
        else { return nil }
        return evaluations[slot]?.enumCase?.index
    }

    /// Whether `slot` holds a kill value no read has served yet (`Evaluation.uncounted`).
    func isUncountedKill(at slot: Int) -> Bool {
        slot < evaluations.count && evaluations[slot]?.uncounted == true
    }

    /// What the session froze for the flag `name`, as a prerequisite of another flag sees it: what it serves now
    /// (a kill's value, once a kill replaced it), the caller's default, or not read yet.
    func prerequisite(_ name: String) -> FrozenPrerequisite {
        guard let slot = FlagSlots.existingSlot(for: name), let evaluation = self[slot] else { return .notFrozen }
        return evaluation.served.map { .served($0) } ?? .nothing
    }

    /// How many flags are frozen.
    var count: Int { evaluations.lazy.filter { $0 != nil }.count }
}
