import FlagCore

/// The Swift names of a set's flag keys: lowerCamelCase split on `-`, `.` and `_`, unique in the file.
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

    /// Names `keys`.
    init(keys: [String]) {
        var names: [String: String] = [:]
        var taken: Set<String> = []
        var collisions: [String] = []
        var holder: [String: String] = [:]
        for key in keys.sorted(by: utf8Less) {
            let plain = Self.identifier(key, spellingSeparators: false)
            var candidates = [plain, Self.identifier(key, spellingSeparators: true)]
            candidates += (2...(keys.count + 1)).map { "\(candidates[1])\($0)" }
            // One of `keys.count + 1` numbered names is free: at most `keys.count - 1` others are taken.
            let name = candidates.first { !taken.contains($0) } ?? plain
            taken.insert(name)
            names[key] = Self.escaped(name)
            if name != plain, let other = holder[plain] {
                collisions.append(
                    "keys '\(other)' and '\(key)' both make the Swift name '\(plain)'; '\(key)' is '\(name)'")
            } else if name != plain {
                collisions.append("the Swift name '\(plain)' of '\(key)' is taken; '\(key)' is '\(name)'")
            }
            holder[plain] = holder[plain] ?? key
            holder[name] = holder[name] ?? key
        }
        self.names = names
        self.collisions = collisions
    }

    /// The lowerCamelCase identifier of a key, unescaped: words split at every character other than an ASCII letter
    /// or digit (a set only has `-`, `.` and `_`), the first in lower case, each other capitalized; a leading digit
    /// gets `_`; `self` and `init` get `Flag`. With `spellingSeparators`, `.` adds the word `Dot` and `_` the word
    /// `Underscore`.
    static func identifier(_ key: String, spellingSeparators: Bool) -> String {
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
        guard let head = words.first else { return "flag" }
        var name = head.lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        if let first = name.unicodeScalars.first, ("0"..."9").contains(first) { name = "_" + name }
        if unnameable.contains(name) { name += "Flag" }
        return name
    }

    /// `name` in backticks when it is a keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// Names a call site cannot write after a type even in backticks' absence (`Flags.self`, `.init`).
    static let unnameable: Set<String> = ["self", "init"]

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
