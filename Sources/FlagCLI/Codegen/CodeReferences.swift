import FlagCore
import Foundation

/// Where a Swift source tree uses flag keys: `FlagKey("…")` declarations, and the names a generated file
/// (`flagctl generate swift`) declares, used as `.newCheckout` or `Flags.newCheckout`.
///
/// A line-by-line scan, not a parser: lines that start as comments (`//`, `/*`, `*`) are skipped, and the generated
/// files are read only for their names (their declarations are not uses). A generated name also counts where the
/// same word names something else (`.enabled` of another type), which can hide an unused flag but never invents one.
struct CodeReferences {
    /// One place a key is used.
    struct Location: Hashable, Comparable, CustomStringConvertible {
        /// The file's path as given: the scanned root joined with its path below it.
        let path: String
        /// The line, from 1.
        let line: Int

        /// `Sources/App/Checkout.swift:12`
        var description: String { "\(path):\(line)" }

        static func < (lhs: Location, rhs: Location) -> Bool {
            lhs.path == rhs.path ? lhs.line < rhs.line : utf8Less(lhs.path, rhs.path)
        }
    }

    /// The locations of each key, sorted.
    let references: [String: [Location]]
    /// How many Swift files were read.
    let fileCount: Int
    /// The generated files found, by path.
    let generatedFiles: [String]

    /// Directories never entered: hidden ones (`.build`, `.git`, `.swiftpm`), and what Xcode and CocoaPods put in a
    /// project but nobody writes.
    static let skippedDirectories: Set<String> = ["DerivedData", "Pods", "Carthage"]

    /// Scans every `.swift` file under `root` (a directory or one file).
    static func scan(_ root: String) throws(CLIError) -> CodeReferences {
        let files = try swiftFiles(root)
        var texts: [(path: String, text: String)] = []
        for path in files {
            texts.append((path, String(decoding: try FileInput.contents(of: path), as: UTF8.self)))
        }
        var names: [String: String] = [:]
        var generated: Set<String> = []
        for (path, text) in texts where GeneratedSwiftFile.isGenerated(text[...]) {
            generated.insert(path)
            for declaration in GeneratedSwiftFile(text).declarations {
                let name = declaration.name.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
                if names[name] == nil { names[name] = declaration.key }
            }
        }
        var references: [String: Set<Location>] = [:]
        for (path, text) in texts where !generated.contains(path) {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                if trimmed.hasPrefix("//") || trimmed.hasPrefix("/*") || trimmed.hasPrefix("*") { continue }
                let location = Location(path: path, line: index + 1)
                for key in keys(in: line, names: names) { references[key, default: []].insert(location) }
            }
        }
        return CodeReferences(
            references: references.mapValues { $0.sorted() }, fileCount: files.count,
            generatedFiles: generated.sorted(by: utf8Less))
    }

    /// The keys one line uses: the string of each `FlagKey("…"` or `FlagKey<T>("…"`, and each `.name` that a
    /// generated file declares.
    static func keys(in line: Substring, names: [String: String]) -> [String] {
        var keys: [String] = []
        let scalars = Array(line.unicodeScalars)
        var index = 0
        let isIdentifier = SwiftSource.isIdentifierScalar
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "F", index == 0 || !isIdentifier(scalars[index - 1]),
                scalars[index...].starts(with: "FlagKey".unicodeScalars)
            {
                index += "FlagKey".unicodeScalars.count
                if index < scalars.count && isIdentifier(scalars[index]) { continue }
                if let key = declaredKey(scalars, from: &index) { keys.append(key) }
                continue
            }
            if scalar == "." {
                var start = index + 1
                let backticked = start < scalars.count && scalars[start] == "`"
                if backticked { start += 1 }
                var end = start
                while end < scalars.count && isIdentifier(scalars[end]) { end += 1 }
                if end > start, !(end < scalars.count && !backticked && scalars[end] == "("),
                    let key = names[String(String.UnicodeScalarView(scalars[start..<end]))]
                {
                    keys.append(key)
                }
                index = max(end, index + 1)
                continue
            }
            index += 1
        }
        return keys
    }

    /// After `FlagKey`: an optional `<…>`, `(`, and a string literal; its value.
    private static func declaredKey(_ scalars: [Unicode.Scalar], from index: inout Int) -> String? {
        func skipBlanks() { while index < scalars.count && scalars[index] == " " { index += 1 } }
        skipBlanks()
        if index < scalars.count && scalars[index] == "<" {
            guard let close = scalars[index...].firstIndex(of: ">") else { return nil }
            index = close + 1
            skipBlanks()
        }
        guard index < scalars.count && scalars[index] == "(" else { return nil }
        index += 1
        skipBlanks()
        let rest = Substring(String(String.UnicodeScalarView(scalars[index...])))
        guard let (key, after) = SwiftSource.parseStringLiteral(rest) else { return nil }
        index = scalars.count - after.unicodeScalars.count
        return key
    }

    /// The `.swift` files under `root`, sorted by path; `root` itself when it is one.
    private static func swiftFiles(_ root: String) throws(CLIError) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else {
            throw .failure("cannot scan '\(root)': no such file or directory")
        }
        guard isDirectory.boolValue else { return [root] }
        let base = URL(fileURLWithPath: root, isDirectory: true)
        guard
            let enumerator = FileManager.default.enumerator(
                at: base, includingPropertiesForKeys: [.isDirectoryKey], options: [.skipsHiddenFiles])
        else { throw .failure("cannot scan '\(root)': it cannot be listed") }
        var files: [String] = []
        let prefix = base.standardizedFileURL.path
        for case let url as URL in enumerator {
            let name = url.lastPathComponent
            let isDirectory: Bool
            do {
                isDirectory = try url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory == true
            } catch {
                throw .failure("cannot scan '\(url.path)': \(error.localizedDescription)")
            }
            if isDirectory {
                if skippedDirectories.contains(name) { enumerator.skipDescendants() }
                continue
            }
            guard name.hasSuffix(".swift") else { continue }
            var relative = url.standardizedFileURL.path
            if relative.hasPrefix(prefix + "/") { relative.removeFirst(prefix.count + 1) }
            files.append(root == "." ? relative : (root.hasSuffix("/") ? root + relative : root + "/" + relative))
        }
        return files.sorted(by: utf8Less)
    }
}
