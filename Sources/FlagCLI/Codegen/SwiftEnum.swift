import FlagCore

/// The Swift enum of an enum flag (docs/core.md, "Enum flags"): a `String` enum with one case per value, in the
/// flag's order, that code reads the flag as.
///
/// ```swift
/// public enum CheckoutTheme: String, CaseIterable, Sendable {
///     case blue
///     case darkMode = "dark-mode"
///     case _3d = "3d"
/// }
/// ```
///
/// A value that is an ASCII identifier is its own case name (`blue`, `darkMode`, `` `default` `` in backticks), unless
/// Swift or the enum reserves it (`self`, `init`, `Self`, `Any`, `Type`, `Protocol`, `rawValue`, `RawValue`,
/// `allCases`, `AllCases`). Every other value gets a lowerCamelCase name made of its ASCII letters and digits
/// (`dark-mode` → `darkMode`, `3d` → `_3d`, `Type` → `type`, `😀` → `value`), with `Case` added where that is still
/// reserved (`self` → `selfCase`), and its raw value says what it stands for. Values that make one name: the plain
/// identifier keeps it, then the first in byte order; the others count (`darkMode2`).
struct SwiftEnum: Equatable {
    /// One case: its name, escaped where needed, and the value it stands for.
    struct Case: Equatable {
        let name: String
        let value: String
    }

    /// The type's name (`CheckoutTheme`).
    let typeName: String
    /// The cases, in the order of the flag's values.
    let cases: [Case]
    /// One line per value that did not get its plain name, for stderr.
    let collisions: [String]

    /// The enum of the flag `key`'s `values`, named `typeName`.
    init(typeName: String, key: String, values: [String]) {
        var names: [String: String] = [:]
        var taken: Set<String> = []
        var holder: [String: String] = [:]
        for value in values where Self.isPlainIdentifier(value) {
            names[value] = value
            taken.insert(value)
            holder[value] = value
        }
        var collisions: [String] = []
        for value in values.sorted(by: utf8Less) where names[value] == nil {
            let plain = SwiftNames.identifier(value, spellingSeparators: false, style: .enumCase)
            let numbered = (2...(values.count + 1)).map { "\(plain)\($0)" }
            // One of `values.count + 1` names is free: fewer other values took one.
            let name = ([plain] + numbered).first { !taken.contains($0) } ?? plain
            let shown = SwiftSource.commentText(value)
            if name != plain, let other = holder[plain] {
                collisions.append(
                    "values '\(SwiftSource.commentText(other))' and '\(shown)' of '\(key)' both make the case name "
                        + "'\(plain)'; '\(shown)' is '\(name)'")
            } else if name != plain {
                collisions.append(
                    "the case name '\(plain)' of '\(shown)' of '\(key)' is taken; '\(shown)' is '\(name)'")
            }
            holder[plain] = holder[plain] ?? value
            holder[name] = holder[name] ?? value
            names[value] = name
            taken.insert(name)
        }
        self.typeName = typeName
        self.cases = values.map { Case(name: SwiftNames.escaped(names[$0] ?? $0), value: $0) }
        self.collisions = collisions
    }

    /// Whether `value` may be a case name as it is: an ASCII identifier (`_` alone is not one) that neither Swift nor
    /// the enum reserves.
    static func isPlainIdentifier(_ value: String) -> Bool {
        guard let first = value.unicodeScalars.first, value != "_",
            first == "_" || SwiftSource.isASCIIAlphanumeric(first) && !("0"..."9").contains(first)
        else { return false }
        return value.unicodeScalars.allSatisfy(SwiftSource.isIdentifierScalar)
            && !SwiftNames.Style.enumCase.unnameable.contains(value)
    }

    /// The case of `value` as an expression of the enum: `.blue`, `` .`default` ``.
    func literal(_ value: String) -> String? {
        cases.first { $0.value == value }.map { ".\($0.name)" }
    }

    /// The declaration's lines, without indentation.
    func lines(access: String) -> [String] {
        var lines = ["\(access)enum \(typeName): String, CaseIterable, Sendable {"]
        for item in cases {
            let bare = item.name.filter { $0 != "`" }
            lines.append(
                bare == item.value
                    ? "    case \(item.name)" : "    case \(item.name) = \(SwiftSource.stringLiteral(item.value))")
        }
        return lines + ["}"]
    }
}
