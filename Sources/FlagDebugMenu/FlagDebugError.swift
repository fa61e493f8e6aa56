/// Why the debug menu did not change an override: the menu is read-only, the flag is unknown, the text is not a value
/// of the flag, or the override was not set from the app.
///
/// ```swift
/// do {
///     try model.setOverride("max-items", text: "many")
/// } catch {
///     print(error.message)   // 'many' is not a 64-bit integer: max-items is an int flag
/// }
/// ```
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
public struct FlagDebugError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for code that tells the cases apart.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code's name, such as `INVALID_VALUE`.
        public let rawValue: String

        /// A code by its name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Overrides are disabled (`Configuration.overridesEnabled` is `false`).
        public static let readOnly = Code(rawValue: "READ_ONLY")
        /// No flag of that key is in the set or among the keys the app declared.
        public static let unknownFlag = Code(rawValue: "UNKNOWN_FLAG")
        /// The text is not a value of the flag's type, or not one of an enum flag's values.
        public static let invalidValue = Code(rawValue: "INVALID_VALUE")
        /// The override comes from the environment or an overrides file, which the app cannot change.
        public static let notSetFromApp = Code(rawValue: "NOT_SET_FROM_APP")

        /// The code's name.
        public var description: String { rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The flag's key, when the error is about one flag.
    public let key: String?
    /// What went wrong and what to change, for people.
    public let message: String

    init(_ code: Code, key: String?, _ message: String) {
        self.code = code
        self.key = key
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
