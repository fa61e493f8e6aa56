import FlagCore

/// A value forced locally for one flag (SPEC §6.4), still untyped: the flag's type decides how it reads.
struct RawOverride: Sendable, Equatable {
    /// The text after `=`, trimmed.
    var text: String
    /// Where it came from, for messages: `overrides.env:3`, `environment FLAG_NEW_CHECKOUT`, `debug menu`.
    var source: String
}

/// A line of the overrides that was ignored, and why.
struct OverrideProblem: Sendable, Equatable, CustomStringConvertible {
    /// `overrides.env:3` or `environment FLAG_X`.
    var source: String
    /// What is wrong.
    var message: String

    var description: String { "\(source): \(message)" }
}

/// The pure parsing of local overrides: env-file lines, `FLAG_*` environment variables, and typing a raw text by
/// the flag's type.
enum OverridesParser {
    /// Parses an env file: `key=value` or `FLAG_KEY=value` lines, an optional `export ` prefix, `#` comments and
    /// blank lines. Later lines win over earlier ones. Bad lines are returned as problems and otherwise ignored.
    static func parseFile(_ text: String, name: String) -> (
        overrides: [String: RawOverride], problems: [OverrideProblem]
    ) {
        var overrides: [String: RawOverride] = [:]
        var problems: [OverrideProblem] = []
        var number = 0
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            let source = "\(name):\(number)"
            // Scalar by scalar: as Characters, a combining mark right after '=', '#' or a space joins it and hides it.
            var line = Substring(rawLine).unicodeScalars.trimmingWhitespace()
            if line.isEmpty || line.first == "#" { continue }
            if line.starts(with: "export ".unicodeScalars) {
                line = line.dropFirst("export ".count).trimmingWhitespace()
            }
            guard let equals = line.firstIndex(of: "=") else {
                problems.append(OverrideProblem(source: source, message: "expected KEY=VALUE, found no '='"))
                continue
            }
            let name = Substring(line[..<equals].trimmingWhitespace())
            let value = Substring(line[line.index(after: equals)...].trimmingWhitespace())
            guard let key = flagKey(forName: String(name)) else {
                problems.append(
                    OverrideProblem(
                        source: source,
                        message: "'\(name)' is not a flag key (a-z, 0-9, '.', '_', '-') nor a FLAG_ variable name"))
                continue
            }
            overrides[key] = RawOverride(text: String(value), source: source)
        }
        return (overrides, problems)
    }

    /// The overrides in the environment: every `FLAG_NAME=value` (`FLAG_NEW_CHECKOUT` → `new-checkout`).
    static func parseEnvironment(_ environment: [String: String]) -> (
        overrides: [String: RawOverride], problems: [OverrideProblem]
    ) {
        var overrides: [String: RawOverride] = [:]
        var problems: [OverrideProblem] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("FLAG_") {
            guard let key = flagKey(forVariable: name) else {
                problems.append(
                    OverrideProblem(
                        source: "environment \(name)",
                        message: "not a flag: use FLAG_ followed by the key in capitals, '-' written as '_'"))
                continue
            }
            overrides[key] = RawOverride(
                text: String(Substring(value).trimmingWhitespace()), source: "environment \(name)")
        }
        return (overrides, problems)
    }

    /// The flag key a line's name stands for: the key itself, or a `FLAG_` variable name.
    static func flagKey(forName name: String) -> String? {
        if name.hasPrefix("FLAG_") { return flagKey(forVariable: name) }
        return isFlagKey(name) ? name : nil
    }

    /// `FLAG_NEW_CHECKOUT` → `new-checkout`: drop the prefix, lower-case, `_` → `-`.
    static func flagKey(forVariable name: String) -> String? {
        // ASCII lower-casing only: Unicode's would turn the Kelvin sign (U+212A) into a `k`.
        let body = name.unicodeScalars.dropFirst("FLAG_".count).map { scalar -> Unicode.Scalar in
            if scalar == "_" { return "-" }
            guard ("A"..."Z").contains(scalar) else { return scalar }
            return Unicode.Scalar(UInt8(truncatingIfNeeded: scalar.value) | 0x20)
        }
        let key = String(String.UnicodeScalarView(body))
        return isFlagKey(key) ? key : nil
    }

    /// Whether `key` matches `^[a-z0-9][a-z0-9._-]{0,127}$` (SPEC §1).
    static func isFlagKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard let first = bytes.first, bytes.count <= 128, isLowerAlphanumeric(first) else { return false }
        return bytes.dropFirst().allSatisfy {
            isLowerAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
        }
    }

    private static func isLowerAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// Reads an override's text as a value of `type`; `nil` with a message when it is not one.
    ///
    /// `bool`: `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`, any case). `int`: a 64-bit integer. `double`:
    /// a finite number. `string`: the text, without one pair of surrounding quotes. `json`: a JSON value.
    static func value(_ text: String, as type: FlagType) -> Result<JSONValue, OverrideValueError> {
        switch type {
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .success(.bool(true))
            case "false", "0", "no", "off": return .success(.bool(false))
            default: return .failure(OverrideValueError(message: "'\(text)' is not a bool (true or false)"))
            }
        case .int:
            guard let int = Int64(text) else {
                return .failure(OverrideValueError(message: "'\(text)' is not a 64-bit integer"))
            }
            return .success(.int(int))
        case .double:
            guard let double = Double(text), double.isFinite else {
                return .failure(OverrideValueError(message: "'\(text)' is not a finite number"))
            }
            return .success(.double(double))
        case .string:
            return .success(.string(unquoted(text)))
        case .json:
            do {
                return .success(try JSONReader.parse(Array(text.utf8)))
            } catch {
                return .failure(OverrideValueError(message: "'\(text)' is not JSON: \(error)"))
            }
        case .unknown(let name):
            return .failure(OverrideValueError(message: "flag type '\(name)' is unknown to this client"))
        }
    }

    private static func unquoted(_ text: String) -> String {
        guard text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first else {
            return text
        }
        return String(text.dropFirst().dropLast())
    }
}

/// Why an override's text is not a value of the flag's type.
struct OverrideValueError: Error, Sendable, Equatable {
    var message: String
}

extension Substring {
    /// Without leading spaces and tabs, and trailing spaces, tabs and CRs.
    func trimmingWhitespace() -> Substring {
        Substring(unicodeScalars.trimmingWhitespace())
    }
}

extension Substring.UnicodeScalarView {
    /// Without leading spaces and tabs, and trailing spaces, tabs and CRs (scalars, so a combining mark after a
    /// space does not keep it).
    func trimmingWhitespace() -> Substring.UnicodeScalarView {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" || last == "\r" { result = result.dropLast() }
        return result
    }
}
