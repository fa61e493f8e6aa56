import FlagCore

/// A session's frozen evaluations, indexed by `FlagKey.slot`.
///
/// A plain array: a frozen read is a bounds check and an index, and a session that reads a handful of flags holds
/// an array of a handful of references (the slots of the flags the process reads first are the smallest).
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
            while slot >= evaluations.count { evaluations.append(nil) }
            evaluations[slot] = newValue
        }
    }

    /// How many flags are frozen.
    var count: Int { evaluations.lazy.filter { $0 != nil }.count }
}
