import Foundation
import Testing

/// One file of the HTTP abuse corpus (`Tests/FlagServerTests/Abuse`): the bytes to send and the statuses expected.
struct AbuseCase: CustomTestStringConvertible, Sendable {
    /// The file name, e.g. `cl-and-te.http`.
    let name: String
    /// The file's text, before expansion.
    let source: [UInt8]
    /// The statuses the server must answer, in order, before it closes the connection.
    let statuses: [Int]
    /// Where the expectation comes from (SPEC §4, RFC 9112 …).
    let reference: String
    /// The statuses as written in `expectations.txt` (`200*1000`), for the test's name.
    let statusText: String

    var testDescription: String { "\(name) → \(statusText)" }

    /// The bytes to send, with `{{admin}}` standing for `adminToken`.
    func bytes(adminToken: String) throws -> [UInt8] {
        try AbuseCorpus.render(source, adminToken: adminToken, file: name)
    }
}

struct AbuseCorpusError: Error, CustomStringConvertible {
    let description: String
}

/// Loads the corpus and expands its small text format (see `Abuse/README.md`).
enum AbuseCorpus {
    static var directory: URL {
        get throws {
            try #require(Bundle.module.url(forResource: "Abuse", withExtension: nil), "the Abuse resources are missing")
        }
    }

    /// Every case listed in `expectations.txt`, in its order.
    static func cases() throws -> [AbuseCase] {
        let directory = try directory
        let table = try String(contentsOf: directory.appendingPathComponent("expectations.txt"), encoding: .utf8)
        var cases: [AbuseCase] = []
        for (number, line) in table.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let columns = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard columns.count == 3, let statuses = Self.statuses(columns[1]) else {
                throw AbuseCorpusError(
                    description: "expectations.txt:\(number + 1): expected FILE STATUSES SOURCE, statuses like "
                        + "400 or 201,401 or 200*1000")
            }
            let name = String(columns[0])
            let source = try Data(contentsOf: directory.appendingPathComponent(name))
            cases.append(
                AbuseCase(
                    name: name, source: Array(source), statuses: statuses,
                    reference: columns[2].trimmingCharacters(in: .whitespaces), statusText: String(columns[1])))
        }
        return cases
    }

    /// `400`, `201,401`, `200*1000` (a status repeated), or nil.
    static func statuses(_ text: Substring) -> [Int]? {
        var result: [Int] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "*", omittingEmptySubsequences: false)
            guard parts.count <= 2, let status = Int(parts[0]), (100...599).contains(status) else { return nil }
            guard let count = parts.count == 2 ? Int(parts[1]) : 1, count >= 1 else { return nil }
            result += Array(repeating: status, count: count)
        }
        return result
    }

    /// Expands a corpus file into wire bytes: lines end in CRLF unless they end in `\`; escapes and directives.
    static func render(_ source: [UInt8], adminToken: String, file: String) throws -> [UInt8] {
        var lines = source.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var output: [UInt8] = []
        for (number, line) in lines.enumerated() {
            var content = line
            let trailingBackslashes = content.reversed().prefix { $0 == UInt8(ascii: "\\") }.count
            let joined = trailingBackslashes % 2 == 1
            if joined { content = content.dropLast() }
            var expander = Expander(text: Array(content), adminToken: adminToken, where: "\(file):\(number + 1)")
            output += try expander.expand(untilClose: false)
            if !joined { output += [0x0D, 0x0A] }
        }
        return output
    }

    /// Expands escapes and `{{…}}` directives of one line, recursively for `repeat`.
    private struct Expander {
        let text: [UInt8]
        let adminToken: String
        let `where`: String
        var index = 0

        init(text: [UInt8], adminToken: String, where location: String) {
            self.text = text
            self.adminToken = adminToken
            self.where = location
        }

        mutating func expand(untilClose: Bool) throws -> [UInt8] {
            var output: [UInt8] = []
            while index < text.count {
                if untilClose && starts(with: "}}") {
                    index += 2
                    return output
                }
                if starts(with: "{{") {
                    index += 2
                    output += try directive()
                } else if text[index] == UInt8(ascii: "\\") {
                    output.append(try escape())
                } else {
                    output.append(text[index])
                    index += 1
                }
            }
            if untilClose { throw fail("unclosed {{") }
            return output
        }

        private mutating func directive() throws -> [UInt8] {
            if starts(with: "admin}}") {
                index += 7
                return Array(adminToken.utf8)
            }
            guard starts(with: "repeat ") else {
                throw fail("unknown directive; expected {{admin}} or {{repeat N TEXT}}")
            }
            index += 7
            var count = 0
            var digits = 0
            while index < text.count, digits < 10, (0x30...0x39).contains(text[index]) {
                count = count * 10 + Int(text[index] - 0x30)
                digits += 1
                index += 1
            }
            guard digits > 0, digits <= 9, index < text.count, text[index] == UInt8(ascii: " ") else {
                throw fail("expected {{repeat N TEXT}} with a count of 1 to 9 digits")
            }
            index += 1
            let unit = try expand(untilClose: true)
            var output: [UInt8] = []
            output.reserveCapacity(unit.count * count)
            for _ in 0..<count { output += unit }
            return output
        }

        private mutating func escape() throws -> UInt8 {
            guard index + 1 < text.count else { throw fail("a lone \\ inside a line") }
            let code = text[index + 1]
            index += 2
            switch code {
            case UInt8(ascii: "r"): return 0x0D
            case UInt8(ascii: "n"): return 0x0A
            case UInt8(ascii: "t"): return 0x09
            case UInt8(ascii: "0"): return 0x00
            case UInt8(ascii: "\\"): return code
            case UInt8(ascii: "x"):
                guard index + 1 < text.count, let high = hexDigit(text[index]), let low = hexDigit(text[index + 1])
                else { throw fail("\\x needs two hex digits") }
                index += 2
                return UInt8(high * 16 + low)
            default:
                throw fail("unknown escape \\\(Character(UnicodeScalar(code)))")
            }
        }

        private func hexDigit(_ byte: UInt8) -> Int? {
            Int(String(UnicodeScalar(byte)), radix: 16)
        }

        private func starts(with literal: String) -> Bool {
            let bytes = Array(literal.utf8)
            return text.count - index >= bytes.count && Array(text[index..<(index + bytes.count)]) == bytes
        }

        private func fail(_ message: String) -> AbuseCorpusError {
            AbuseCorpusError(description: "\(self.where), byte \(index + 1): \(message)")
        }
    }
}
