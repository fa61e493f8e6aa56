import FlagCore

/// The Swift names of a set's flag keys: lowerCamelCase split on `-`, `.` and `_`, unique in the file; or, in the
/// style `.type`, the UpperCamelCase names of enum flags' types (`checkout-theme` is `CheckoutTheme`).
///
/// `new-checkout` is `newCheckout`, `ios.dark_mode` `iosDarkMode`, `3d-touch` `_3dTouch`; a keyword is escaped
/// (`` `default` ``), and `self` and `init`, which no call site can name after a type (`Flags.self` is the
/// metatype), become `selfFlag` and `initFlag`.
///
/// Two keys with one name: the key first in byte order keeps it (`-` sorts before `.` and `_`, so the usual
/// spelling wins); each other key spells its separators (`new.checkout` is `newDotCheckout`, `new_checkout`
/// `newUnderscoreCheckout`), then counts (`newCheckout2`). A name depends only on the keys that collide with it,
/// so adding an unrelated flag never renames another.
struct SwiftNames {
    /// The name of each key, escaped where needed (`` `default` ``).
    let names: [String: String]
    /// One line per key that did not get its plain name, for stderr.
    let collisions: [String]

    /// Names `keys` in `style`; a name in `taken` is another declaration's, which the keys name around.
    init(keys: [String], style: Style = .member, taken reserved: Set<String> = []) {
        var names: [String: String] = [:]
        var taken = reserved
        var collisions: [String] = []
        var holder: [String: String] = [:]
        for key in keys.sorted(by: utf8Less) {
            let plain = Self.identifier(key, spellingSeparators: false, style: style)
            var candidates = [plain, Self.identifier(key, spellingSeparators: true, style: style)]
            candidates += (2...(keys.count + reserved.count + 1)).map { "\(candidates[1])\($0)" }
            // One of `keys.count + reserved.count + 1` numbered names is free: fewer others are taken.
            let name = candidates.first { !taken.contains($0) } ?? plain
            taken.insert(name)
            names[key] = Self.escaped(name)
            if name != plain, let other = holder[plain] {
                collisions.append(
                    "keys '\(other)' and '\(key)' both make the Swift \(style.noun) '\(plain)'; '\(key)' is '\(name)'")
            } else if name != plain {
                collisions.append("the Swift \(style.noun) '\(plain)' of '\(key)' is taken; '\(key)' is '\(name)'")
            }
            holder[plain] = holder[plain] ?? key
            holder[name] = holder[name] ?? key
        }
        self.names = names
        self.collisions = collisions
    }

    /// The identifier of a key (or a value) in `style`, unescaped: words split at every character other than an
    /// ASCII letter or digit (a key only has `-`, `.` and `_`), the first in lower case and each other capitalized
    /// (for a type, each capitalized at its first letter: `3d-touch` is `_3DTouch`); a leading digit gets `_`; a
    /// name Swift reserves gets the style's suffix (`selfFlag`). With `spellingSeparators`, `.` adds the word `Dot`
    /// and `_` the word `Underscore`.
    static func identifier(_ key: String, spellingSeparators: Bool, style: Style = .member) -> String {
        var words: [String] = []
        var word = ""
        for scalar in key.unicodeScalars {
            if SwiftSource.isASCIIAlphanumeric(scalar) {
                word.unicodeScalars.append(scalar)
                continue
            }
            if !word.isEmpty { words.append(word) }
            word = ""
            if spellingSeparators && scalar == "." { words.append("dot") }
            if spellingSeparators && scalar == "_" { words.append("underscore") }
        }
        if !word.isEmpty { words.append(word) }
        guard let head = words.first else { return style.fallback }
        var name: String
        if style == .type {
            name = words.map(capitalizingFirstLetter).joined()
        } else {
            name = head.lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        }
        if let first = name.unicodeScalars.first, ("0"..."9").contains(first) { name = "_" + name }
        if style.unnameable.contains(name) { name += style.suffix }
        return name
    }

    /// `word` with its first ASCII letter in upper case: `touch` → `Touch`, `3d` → `3D`.
    private static func capitalizingFirstLetter(_ word: String) -> String {
        guard let letter = word.firstIndex(where: { ("a"..."z").contains($0) }) else { return word }
        return word[..<letter] + word[letter...].prefix(1).uppercased() + word[letter...].dropFirst()
    }

    /// `name` in backticks when it is a keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// What a name is for; each kind has its own form and its own names to avoid.
    enum Style {
        /// A key's `static let`: lowerCamelCase.
        case member
        /// The enum of an enum flag's values: UpperCamelCase.
        case type
        /// A case of that enum, for a value that is not an identifier already: lowerCamelCase.
        case enumCase

        /// Names a call site cannot write after a type, or that the file or the enum declares itself.
        ///
        /// A member: `Flags.self` is the metatype, `.init` a call. A type: `Self`, `Any`, `Type` and `Protocol`
        /// cannot be declared, and the names the file writes (`String`, `FlagKey`, …) would be shadowed. A case:
        /// those, and the members `RawRepresentable` and `CaseIterable` declare.
        var unnameable: Set<String> {
            switch self {
            case .member: ["self", "init"]
            case .type:
                [
                    "Self", "Any", "Type", "Protocol", "Bool", "Int", "Double", "String", "JSONValue", "FlagKey",
                    "AnyFlagKey", "FlagClient", "FlagCore", "CaseIterable", "Sendable",
                ]
            case .enumCase:
                ["self", "init", "Self", "Any", "Type", "Protocol", "rawValue", "RawValue", "allCases", "AllCases"]
            }
        }

        /// What an unnameable name gets: `selfFlag`, `StringFlag`, `selfCase`.
        var suffix: String { self == .enumCase ? "Case" : "Flag" }

        /// The name of a key or value without an ASCII letter or digit (the wire format allows no such key).
        var fallback: String {
            switch self {
            case .member: "flag"
            case .type: "Flag"
            case .enumCase: "value"
            }
        }

        /// How the warnings call the name.
        var noun: String { self == .type ? "type name" : "name" }
    }

    /// Swift's reserved words, and the contextual ones escaped in some positions (`any`, `some`, `await`): a name
    /// among them is declared in backticks.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private", "precedencegroup",
        "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break", "case",
        "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat",
        "return", "throw", "switch", "where", "while", "as", "false", "is", "nil", "self", "super", "throws", "true",
        "try", "await", "any", "some", "package", "actor", "async", "macro", "each", "then", "sending",
    ]
}
