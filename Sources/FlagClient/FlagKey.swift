import FlagCore
import FlagLock
import Foundation

/// A typed flag with its compiled-in default: what code asks a session for.
///
/// ```swift
/// extension FlagKey where Value == Bool {
///     static let newCheckout = FlagKey("new-checkout", default: false)
/// }
/// struct Banner: Decodable, Sendable { var title: String }
/// let banner = FlagKey("home-banner", default: Banner(title: "Welcome"))   // a `json` flag
/// enum Theme: String, CaseIterable, Sendable { case blue, green }
/// let theme = FlagKey("checkout-theme", default: Theme.blue)               // a `string` flag read as an enum
/// ```
public struct FlagKey<Value: Sendable>: Sendable {
    /// The flag's key in the set, e.g. `new-checkout`.
    public let name: String
    /// The value served when the flag is missing, of another type, broken, or no set is available.
    public let defaultValue: Value
    /// The flag type this key expects in the set.
    @usableFromInline let type: FlagType
    /// The default as JSON, for evaluation (`.null` for Decodable values, whose default is never converted).
    @usableFromInline let defaultJSON: JSONValue
    /// Converts a served JSON value to `Value`; `nil` when it is not one.
    @usableFromInline let convert: @Sendable (JSONValue) -> Value?
    /// The name's small number in this process (`FlagSlots`): where a session keeps the flag's frozen value.
    @usableFromInline let slot: Int
    /// The name with its evaluation hash, computed once: a first read finds the flag without hashing the name.
    @usableFromInline let handle: FlagHandle
    /// Whether `convert` is cheap enough to run on every read (Bool, Int, Double, String, JSONValue, an enum).
    @usableFromInline let isPrimitive: Bool
    /// For a key read as an enum, what it knows of the cases; `nil` for every other key.
    @usableFromInline let cases: EnumCases?
    /// For a key read as a `CaseIterable` enum, every case in the type's order (that of `cases.rawValues`): a
    /// frozen read takes the one a first read found by its index. Empty for every other key.
    @usableFromInline let caseValues: [Value]
    /// `cases`, unretained: what a read passes, since passing `cases` itself retained and released it at every read,
    /// atomic operations that the frozen read of any other key does without. Safe as long as the key lives, for it
    /// holds `cases`; a read borrows the key.
    @usableFromInline let unretainedCases: Unmanaged<EnumCases>?

    @usableFromInline
    init(
        name: String, default value: Value, type: FlagType, defaultJSON: JSONValue, isPrimitive: Bool,
        cases: EnumCases? = nil, caseValues: [Value] = [], convert: @escaping @Sendable (JSONValue) -> Value?
    ) {
        self.name = name
        self.slot = FlagSlots.slot(for: name)
        self.handle = FlagHandle(name)
        self.defaultValue = value
        self.type = type
        self.defaultJSON = defaultJSON
        self.isPrimitive = isPrimitive
        self.cases = cases
        self.caseValues = caseValues
        self.unretainedCases = cases.map { Unmanaged.passUnretained($0) }
        self.convert = convert
    }
}

extension FlagKey where Value == Bool {
    /// A `bool` flag: `FlagKey("new-checkout", default: false)`.
    public init(_ name: String, default value: Bool) {
        self.init(name: name, default: value, type: .bool, defaultJSON: .bool(value), isPrimitive: true) {
            Bool(flagValue: $0)
        }
    }
}

extension FlagKey where Value == Int {
    /// An `int` flag: `FlagKey("max-items", default: 20)`.
    public init(_ name: String, default value: Int) {
        self.init(name: name, default: value, type: .int, defaultJSON: .int(Int64(value)), isPrimitive: true) {
            Int(flagValue: $0)
        }
    }
}

extension FlagKey where Value == Double {
    /// A `double` flag: `FlagKey("discount-rate", default: 0.1)`.
    public init(_ name: String, default value: Double) {
        self.init(name: name, default: value, type: .double, defaultJSON: .double(value), isPrimitive: true) {
            Double(flagValue: $0)
        }
    }
}

extension FlagKey where Value == String {
    /// A `string` flag: `FlagKey("checkout-title", default: "Pay")`.
    public init(_ name: String, default value: String) {
        self.init(name: name, default: value, type: .string, defaultJSON: .string(value), isPrimitive: true) {
            String(flagValue: $0)
        }
    }
}

extension FlagKey where Value: RawRepresentable, Value.RawValue == String {
    /// A `string` flag read as an enum: `FlagKey("checkout-theme", default: Theme.blue)`.
    ///
    /// A served string that is not the raw value of a case yields the default with `ERROR` / `TYPE_MISMATCH`, at the
    /// first read, frozen and counted as such; it never traps. For a `CaseIterable` type the client also knows every
    /// case, and reports their raw values, so that the server can refuse to serve one this app does not have
    /// (docs/telemetry.md, "The compatibility gate").
    @inlinable
    public init(_ name: String, default value: Value) {
        self.init(enumNamed: name, default: value)
    }

    /// The key both public initializers of an enum key make. Inlinable, so that its closures are specialized for
    /// `Value` in the caller's module: unspecialized, they reached `Value(rawValue:)` through witness tables.
    @inlinable
    init(enumNamed name: String, default value: Value) {
        let all = Self.allCases(of: Value.self)
        let cases = EnumCases(
            typeName: String(describing: Value.self), rawValues: all.map(\.rawValue), default: value.rawValue,
            isCase: { Value(rawValue: $0) != nil })
        self.init(
            name: name, default: value, type: .string, defaultJSON: .string(value.rawValue), isPrimitive: true,
            cases: cases, caseValues: all
        ) { json in
            guard case .string(let raw) = json else { return nil }
            // `init(rawValue:)` costs as much as the rest of a first read: it compares the string with each case's
            // the slow way. It is left for types that do not list their cases.
            if let index = cases.index(of: raw) { return all[index] }
            return Value(rawValue: raw)
        }
    }

    /// Every case of `type` in its order when it is `CaseIterable`, else none. Found without a constraint of its
    /// own: a third initializer of `FlagKey` for `CaseIterable` types would meet the `Decodable` one too, and need a
    /// fourth.
    @usableFromInline
    static func allCases(of type: Value.Type) -> [Value] {
        guard let iterable = type as? any CaseIterable.Type else { return [] }
        return cases(of: iterable)
    }

    private static func cases<Cases: CaseIterable>(of type: Cases.Type) -> [Value] {
        Cases.allCases.compactMap { $0 as? Value }
    }
}

extension FlagKey where Value: RawRepresentable & Decodable, Value.RawValue == String {
    /// A `string` flag read as an enum that is also `Decodable` (a `String` enum declared `Codable`): the same key as
    /// for any `RawRepresentable` type, not a `json` flag. Declared because such a type matches both of those
    /// initializers, and Swift would find the call ambiguous.
    @inlinable
    public init(_ name: String, default value: Value) {
        self.init(enumNamed: name, default: value)
    }
}

extension FlagKey where Value == JSONValue {
    /// A `json` flag read as an untyped JSON value: `FlagKey("limits", default: .object([:]))`.
    public init(_ name: String, default value: JSONValue) {
        self.init(name: name, default: value, type: .json, defaultJSON: value, isPrimitive: true) { $0 }
    }
}

extension FlagKey where Value: Decodable {
    /// A `json` flag decoded into `Value`: `FlagKey("home-banner", default: Banner(title: "Welcome"))`.
    ///
    /// A served value that does not decode as `Value` yields the default with `ERROR` / `TYPE_MISMATCH`.
    public init(_ name: String, default value: Value) {
        self.init(name: name, default: value, type: .json, defaultJSON: .null, isPrimitive: false) { json in
            var writer = JSONWriter()
            writer.value(json)
            return try? JSONDecoder().decode(Value.self, from: Data(writer.bytes))
        }
    }
}

extension FlagKey {
    /// Turns an evaluation of this key's flag into a typed detail: the default on every error, and `TYPE_MISMATCH`
    /// when the served value does not convert.
    func typed(_ detail: EvaluationDetail<JSONValue>) -> EvaluationDetail<Value> {
        if detail.errorCode != nil {
            return detail.map { _ in defaultValue }
        }
        guard let value = convert(detail.value) else {
            return EvaluationDetail(
                value: defaultValue, reason: .error, errorCode: .typeMismatch,
                errorMessage: "flag '\(name)' served a value that does not convert to \(Value.self)",
                version: detail.version)
        }
        return detail.map { _ in value }
    }
}

extension FlagKey: Hashable {
    /// Keys are equal when they name the same flag.
    /// Two keys are equal when they name the same flag.
    public static func == (lhs: FlagKey, rhs: FlagKey) -> Bool { lhs.name == rhs.name }

    /// Hashes the flag's name, the key's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension FlagKey {
    /// `value` as this key's `Value`, or `nil` when it is not one (for test doubles of `FeatureFlags`).
    public func converted(_ value: JSONValue) -> Value? { convert(value) }
}

/// A small number for each flag name, the same for every key, session and client of the process, so that a session
/// keeps its frozen values in an array indexed by it: a frozen read indexes instead of hashing the name.
///
/// Process-wide because a `FlagKey` is made without a client (often as a `static let`). Numbers are given in order
/// of first use and never taken back: they count the distinct flags the process reads, restores, sees killed or finds
/// required by a flag of a set it compiles (`SessionSlots`), and a session's array is as long as the largest number
/// it holds.
enum FlagSlots {
    private static let slots = Locked<[String: Int]>([:])

    /// The number of `name`, if it has one: no session can hold a flag that has none.
    static func existingSlot(for name: String) -> Int? {
        slots.withLock { $0[name] }
    }

    /// The number of `name`, given now if it has none yet.
    static func slot(for name: String) -> Int {
        slots.withLock { slots in
            if let slot = slots[name] { return slot }
            let slot = slots.count
            slots[name] = slot
            return slot
        }
    }
}
