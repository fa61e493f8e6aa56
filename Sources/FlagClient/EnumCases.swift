import FlagCore

/// What a key read as an enum knows of its cases: which served strings are cases, and, for a `CaseIterable` type,
/// every case's raw value (what telemetry reports, and where a first read finds the case it serves). One per key,
/// made with it; `FlagKey.caseValues` holds the cases themselves, in the same order.
@usableFromInline
final class EnumCases: Sendable {
    /// Whether a served string is the raw value of a case (`init(rawValue:)`).
    let isCase: @Sendable (String) -> Bool
    /// The type's name, for the error of a value that is not a case.
    let typeName: String
    /// Every case's raw value in the type's order; empty when the type is not `CaseIterable`.
    let rawValues: [String]
    /// Every case's raw value, each once, and the default's, as reports carry them; `nil` when the type is not
    /// `CaseIterable`.
    let known: TelemetryReport.KnownValues?

    @usableFromInline
    init(typeName: String, rawValues: [String], default value: String, isCase: @escaping @Sendable (String) -> Bool) {
        self.isCase = isCase
        self.typeName = typeName
        self.rawValues = rawValues
        var seen: Set<String> = []
        known =
            rawValues.isEmpty
            ? nil
            : TelemetryReport.KnownValues(values: rawValues.filter { seen.insert($0).inserted }, defaultValue: value)
    }

    /// The position of `raw` among `rawValues`, if it is there. Lengths are compared first: raw values mostly
    /// differ in length, and telling two different strings apart costs the standard library several times more.
    @usableFromInline
    func index(of raw: String) -> Int? {
        let length = raw.utf8.count
        return rawValues.indices.first { rawValues[$0].utf8.count == length && rawValues[$0] == raw }
    }

    /// What a served value is to this key: the case at an index, a case of a type that does not list them, or a
    /// string that is not a case.
    enum Match {
        case listed(Int)
        case unlisted
        case notACase(String)
    }

    /// What `served` is to this key (`nil`, or a value of another type, is left to the evaluation: `unlisted`).
    func match(_ served: JSONValue?) -> Match {
        guard case .string(let raw)? = served else { return .unlisted }
        if let index = index(of: raw) { return .listed(index) }
        return isCase(raw) ? .unlisted : .notACase(raw)
    }

    /// What a session freezes, counts and persists in place of `evaluation` of the flag `key` when it serves `raw`,
    /// which is not a case: the caller's default with `ERROR` / `TYPE_MISMATCH`, so that a read never meets a value
    /// the app has no case for. A kill's marks are kept, so that a restore does not undo it in the session.
    func mismatch(_ evaluation: Evaluation, serving raw: String, key: String) -> Evaluation {
        Evaluation(
            served: nil, reason: .error, error: .typeMismatch,
            message: "flag '\(key)' served \"\(raw)\", which is not a case of \(typeName): serving the compiled-in "
                + "default",
            version: evaluation.version, killed: evaluation.killed, uncounted: evaluation.uncounted)
    }
}

/// The case an evaluation serves, for the enum key that evaluated it: that key's cases, and the index among them.
/// A session keeps it beside the evaluation (`FrozenValues`), not in it: a larger `Evaluation` made every key's first
/// read dearer.
struct EnumCase: Sendable {
    let cases: EnumCases
    let index: Int
}
