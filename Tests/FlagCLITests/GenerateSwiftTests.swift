import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagCLI

/// `flagctl generate swift`: the files it writes compile against the FlagClient this build made, and `--check`
/// catches each kind of drift.
@Suite("generate swift", .live)
struct GenerateSwiftTests {
    /// The set the drift tests start from; each test changes one thing.
    static let base = #"""
        {
          "schema": 1, "set": "drift", "version": 3,
          "flags": {
            "new-checkout": { "type": "bool", "kind": "release", "default": false, "description": "Checkout v2",
                              "expiresAt": "2099-01-01T00:00:00Z" },
            "max-items": { "type": "int", "kind": "ops", "default": 20 },
            "title": { "type": "string", "kind": "ops", "default": "Pay" },
            "beta.banner": { "type": "bool", "kind": "ops", "default": false }
          }
        }
        """#

    static let now = CodegenFixtures.now

    /// The base set with `change` applied, as a file in `directory`.
    static func write(_ name: String, in directory: TemporaryDirectory, _ change: (inout FlagSet) -> Void = { _ in })
        throws -> String
    {
        var set = try FlagSet.decode(Array(base.utf8))
        change(&set)
        try directory.write(name, Data(set.encoded(pretty: true)))
        return directory.url.appendingPathComponent(name).path
    }

    /// `generate swift --check` of the file generated from the base set (after `start`) against the changed set.
    static func check(
        _ extra: [String] = [], start: (inout FlagSet) -> Void = { _ in }, change: (inout FlagSet) -> Void,
        edit: (String) -> String = { $0 }
    ) throws -> Run {
        let directory = try TemporaryDirectory()
        let before = try write("before.json", in: directory, start)
        let swift = directory.url.appendingPathComponent("Flags.swift").path
        let generated = runInProcess(["generate", "swift", "--file", before, "--output", swift], now: now)
        #expect(generated.status == 0, "\(generated)")
        let text = try String(contentsOfFile: swift, encoding: .utf8)
        try Data(edit(text).utf8).write(to: URL(fileURLWithPath: swift))
        let after = try write("after.json", in: directory) { set in
            start(&set)
            change(&set)
        }
        return runInProcess(["generate", "swift", "--file", after, "--check", swift] + extra, now: now)
    }

    // MARK: - The file compiles

    @Test("the generated files typecheck against the built FlagClient, in both layouts, and every name resolves")
    func typechecks() throws {
        let directory = try TemporaryDirectory()
        try directory.write("hostile.json", CodegenFixtures.hostile)
        try directory.write("life.json", CodegenFixtures.lifecycle)
        let hostile = try Flagctl.run(
            ["generate", "swift", "--file", "hostile.json", "--output", "Hostile.swift"], in: directory)
        #expect(hostile.status == 0, "\(hostile)")
        #expect(hostile.stderrLines.count == 8, "the collisions of keys, types and cases are reported: \(hostile)")
        #expect(hostile.stderr.contains("'new.checkout' is 'newDotCheckout'"))
        #expect(
            hostile.stderr.contains("both make the Swift type name 'NewTheme'; 'new_theme' is 'NewUnderscoreTheme'"))
        #expect(hostile.stderr.contains("'dark-mode' is 'darkMode3'"))
        let life = try Flagctl.run(
            [
                "generate", "swift", "--file", "life.json", "--namespace", "Life", "--access", "internal", "--output",
                "Life.swift",
            ], in: directory)
        #expect(life.status == 0, "\(life)")
        // A use of every key that is not deprecated, written as an app writes it.
        var uses = [
            "import FlagClient", "import FlagCore", "func use<Value>(_ key: FlagKey<Value>) {}", "func all() {",
        ]
        for declaration in GeneratedSwiftFile(
            try String(contentsOf: directory.url.appendingPathComponent("Hostile.swift"), encoding: .utf8)
        ).declarations {
            let name = declaration.name.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            uses.append("    use(FlagKey<\(declaration.typeName)>.\(name))")
            uses.append("    let _: FlagKey<\(declaration.typeName)> = .\(name)")
            // Every case by its name, as a switch names them.
            for item in declaration.cases ?? [] {
                uses.append("    let _: \(declaration.typeName) = .\(item.name)")
                uses.append("    _ = \(declaration.typeName).\(item.name)")
            }
        }
        for declaration in GeneratedSwiftFile(
            try String(contentsOf: directory.url.appendingPathComponent("Life.swift"), encoding: .utf8)
        ).declarations
        where declaration.deprecation == nil {
            uses.append("    use(Life.\(declaration.name))")
        }
        // The namespace's list of keys compiles without a warning: it names no deprecated key.
        uses.append("    let _: [AnyFlagKey] = Life.allKeys")
        try directory.write("Uses.swift", (uses + ["}"]).joined(separator: "\n") + "\n")
        let run = try SwiftTypecheck.run(
            ["Hostile.swift", "Life.swift", "Uses.swift"], in: directory, warningsAsErrors: true)
        #expect(run.status == 0, "\(run)")
    }

    @Test("code reading an expired or archived flag gets a deprecation warning naming the kept value and the date")
    func deprecationWarnings() throws {
        let directory = try TemporaryDirectory()
        try directory.write("life.json", CodegenFixtures.lifecycle)
        let life = try Flagctl.run(
            ["generate", "swift", "--file", "life.json", "--output", "Life.swift"], in: directory)
        #expect(life.status == 0, "\(life)")
        try directory.write(
            "Uses.swift",
            """
            import FlagClient
            func use<Value>(_ key: FlagKey<Value>) {}
            func all() {
                use(FlagKey<Bool>.expiredKept)
                use(FlagKey<String>.archivedKept)
                use(FlagKey<Bool>.killed)
            }

            """)
        let run = try SwiftTypecheck.run(["Life.swift", "Uses.swift"], in: directory, warningsAsErrors: false)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdout.contains(
                "'expiredKept' is deprecated: expired on 2026-01-10: the set serves its kept value true to everyone"))
        #expect(
            run.stdout.contains(
                #"'archivedKept' is deprecated: archived (expired on 2025-06-01): the set no longer serves it and "#
                    + #"this default is its kept value "new \"quoted\" "; remove the flag from code"#))
        #expect(!run.stdout.contains("'killed' is deprecated"))
    }

    // MARK: - Output

    @Test("stdout and --output give the same text; writing the same text again leaves the file alone")
    func output() throws {
        let directory = try TemporaryDirectory()
        let file = try Self.write("set.json", in: directory)
        let printed = runInProcess(["generate", "swift", "--file", file], now: Self.now)
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.stdout.hasPrefix("// Generated by flagctl from set drift, version 3. Do not edit.\n"))
        let swift = directory.url.appendingPathComponent("Flags.swift").path
        let wrote = runInProcess(["generate", "swift", "--file", file, "--output", swift], now: Self.now)
        #expect(wrote.stdout == "wrote \(swift): 4 flags from set drift, version 3\n")
        #expect(try String(contentsOfFile: swift, encoding: .utf8) == printed.stdout)
        let again = runInProcess(["--json", "generate", "swift", "--file", file, "--output", swift], now: Self.now)
        #expect(again.stdout == #"{"file":"\#(swift)","set":"drift","version":3,"flags":4,"changed":false}"# + "\n")
    }

    @Test(
        "usage errors name the option",
        arguments: [
            (["--output", "a.swift", "--check", "b.swift"], "give one of them"),
            (["--strict"], "--strict only applies to --check FILE"),
            (["--access", "open"], "--access is public or internal, not 'open'"),
            (["--namespace", "enum"], "--namespace needs a Swift type name"),
            (["--namespace", "9Flags"], "--namespace needs a Swift type name"),
            (["--version", "0"], "--version needs a version number from 1, not '0'"),
        ])
    func usageErrors(arguments: [String], message: String) {
        let run = runInProcess(["generate", "swift", "--file", "x.json"] + arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains(message), "\(run)")
    }

    @Test("a file of another version than --version, or with problems, is refused")
    func refusals() throws {
        let directory = try TemporaryDirectory()
        let file = try Self.write("set.json", in: directory)
        let wrongVersion = runInProcess(["generate", "swift", "--file", file, "--version", "2"])
        #expect(wrongVersion.status == 1)
        #expect(wrongVersion.stderr.contains("holds version 3 of set drift, not version 2 (--version)"))
        let broken = try Self.write("broken.json", in: directory) { $0.flags["title"]?.defaultValue = .int(1) }
        let run = runInProcess(["generate", "swift", "--file", broken])
        #expect(run.status == 1)
        #expect(run.stderr.contains("flags.title.default"), "\(run)")
    }

    // MARK: - --check

    @Test("an unchanged set, a new version alone or a changed doc comment is not drift; --strict says they are")
    func noDrift() throws {
        let same = try Self.check(change: { _ in })
        #expect(same.status == 0, "\(same)")
        #expect(same.stdout.hasSuffix("is up to date with set drift, version 3\n"), "\(same)")

        let version = try Self.check(change: { $0.version = 9 })
        #expect(version.status == 0, "\(version)")
        #expect(version.stdout.contains("up to date with set drift, version 9 (generated from version 3; no change"))
        let strictVersion = try Self.check(["--strict"], change: { $0.version = 9 })
        #expect(strictVersion.status == 1, "\(strictVersion)")
        #expect(strictVersion.stdout.contains("~ generated from set drift, version 3; the set is now drift, version 9"))

        let documentation = try Self.check(change: {
            $0.flags["title"]?.description = "The pay button's title"
            $0.flags["title"]?.owner = "growth"
        })
        #expect(documentation.status == 0, "\(documentation)")
        let strictDocumentation = try Self.check(
            ["--strict"], change: { $0.flags["title"]?.description = "The pay button's title" })
        #expect(strictDocumentation.status == 1)
        #expect(strictDocumentation.stdout.contains("~ title: doc comment changed"))
    }

    @Test(
        "each kind of drift exits 1 with a line saying what changed",
        arguments: [
            ("added", "+ dark-mode: added as darkMode (Bool, default true)"),
            ("removed", "- max-items: removed (was maxItems)"),
            ("retyped", "~ max-items: type Int → Double"),
            ("default", #"~ title: default "Pay" → "Pay now""#),
            (
                "deprecated",
                "~ new-checkout: newly deprecated: expired on 2026-11-01: the set serves its kept value true"
            ),
            ("archived", "~ max-items: newly deprecated: archived: the set no longer serves it"),
            (
                "renamed",
                "~ beta.banner: renamed in Swift betaBanner → betaDotBanner (code using .betaBanner must change)"
            ),
        ])
    func drift(kind: String, line: String) throws {
        let run = try Self.check(change: { set in
            switch kind {
            case "added": set.flags["dark-mode"] = Flag(key: "dark-mode", type: .bool, defaultValue: .bool(true))
            case "removed": set.flags["max-items"] = nil
            case "retyped":
                set.flags["max-items"]?.type = .double
                set.flags["max-items"]?.defaultValue = .double(20)
            case "default": set.flags["title"]?.defaultValue = .string("Pay now")
            case "deprecated":
                set.flags["new-checkout"]?.expiresAt = ISO8601.parse("2026-11-01T00:00:00Z")
                set.flags["new-checkout"]?.expiredValue = .bool(true)
            case "archived": set.flags["max-items"]?.archived = true
            default: set.flags["beta-banner"] = Flag(key: "beta-banner", type: .bool, defaultValue: .bool(false))
            }
        })
        #expect(run.status == 1, "\(run)")
        #expect(
            run.stdoutLines.first?.hasSuffix("is out of date with set drift, version 3 (generated from version 3):")
                == true, "\(run)")
        #expect(run.stdoutLines.contains { $0.hasPrefix("  " + line) }, "\(run)")
        #expect(run.stdoutLines.last?.hasPrefix("update it: flagctl generate swift --file ") == true)
    }

    @Test(
        "an enum flag's value added, removed, renamed in Swift or moved is drift; listing values retypes a string flag",
        arguments: [
            ("added", #"~ theme: value "pink" added as .pink"#),
            ("removed", #"~ theme: value "green" removed (code using .green must change)"#),
            (
                "renamed",
                #"~ theme: value "dark-mode" renamed in Swift .darkMode → .darkMode2 (code using .darkMode must change)"#
            ),
            ("reordered", "~ theme: values reordered: green, blue, darkMode (allCases follows)"),
            ("listed", "~ title: type String → Title"),
        ])
    func enumDrift(kind: String, line: String) throws {
        let run = try Self.check(
            start: { set in
                set.flags["theme"] = Flag(
                    key: "theme", type: .string, kind: .ops, defaultValue: .string("blue"),
                    values: ["blue", "green", "dark-mode"])
            },
            change: { set in
                switch kind {
                case "added": set.flags["theme"]?.values?.append("pink")
                case "removed": set.flags["theme"]?.values?.removeAll { $0 == "green" }
                case "renamed": set.flags["theme"]?.values?.append("darkMode")
                case "reordered": set.flags["theme"]?.values = ["green", "blue", "dark-mode"]
                default: set.flags["title"]?.values = ["Pay", "Go"]
                }
            })
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.contains { $0.hasPrefix("  " + line) }, "\(run)")
    }

    @Test("a hand edit outside the declarations is drift; --json lists the changes for scripts")
    func handEditAndJSON() throws {
        let edited = try Self.check(
            change: { _ in },
            edit: { $0.replacingOccurrences(of: "import FlagClient", with: "@testable import FlagClient") })
        #expect(edited.status == 1, "\(edited)")
        #expect(edited.stdout.contains("~ code outside the declarations differs"))

        let json = try Self.check(["--json"], change: { $0.flags["title"]?.defaultValue = .string("Go") })
        #expect(json.status == 1)
        let object = try #require(try Flagctl.jsonObjects(json).first)
        #expect(object["upToDate"] as? Bool == false)
        #expect(object["fileVersion"] as? Int == 3)
        let changes = try #require(object["changes"] as? [[String: String]])
        #expect(changes == [["kind": "default", "key": "title", "detail": #"default "Pay" → "Go""#]])
    }

    @Test("--check of a file that does not exist says how to make it")
    func checkMissingFile() throws {
        let directory = try TemporaryDirectory()
        let file = try Self.write("set.json", in: directory)
        let run = runInProcess([
            "generate", "swift", "--file", file, "--check", "/nonexistent/Flags.swift", "--namespace", "Flags",
        ])
        #expect(run.status == 1)
        #expect(
            run.stderr
                == "error: /nonexistent/Flags.swift does not exist; generate it with 'flagctl generate swift --file "
                + "\(file) --output /nonexistent/Flags.swift --namespace Flags'\n")
    }
}

/// `swiftc -typecheck` of files against the modules this test build made (FlagClient and what it imports), without
/// building a package.
enum SwiftTypecheck {
    /// Typechecks `files` (names in `directory`) in Swift 6 mode; the compiler's diagnostics are in `stdout`.
    static func run(_ files: [String], in directory: TemporaryDirectory, warningsAsErrors: Bool) throws -> Run {
        let swiftc = try #require(BuiltProducts.onPath("swiftc"), "no swiftc on the PATH")
        let modules = try #require(
            BuiltProducts.moduleDirectory(of: "FlagClient"), "FlagClient.swiftmodule is not beside the test bundle")
        var arguments = ["-typecheck", "-swift-version", "6", "-I", modules.path]
        // FlagClient's dependencies import system libraries (CSQLite, CCrypto), whose module maps SwiftPM passes to
        // every compile: pass each the package has. A map of a module nothing imports is read and left unused.
        let sources = BuiltProducts.repositoryRoot.appendingPathComponent("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let map = sources.appendingPathComponent(target).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) {
                arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"]
            }
        }
        // The build's module cache holds Foundation's and Glibc's modules already: a fresh one costs seconds.
        let cache = modules.deletingLastPathComponent().appendingPathComponent("ModuleCache")
        if FileManager.default.fileExists(atPath: cache.path) { arguments += ["-module-cache-path", cache.path] }
        if warningsAsErrors { arguments.append("-warnings-as-errors") }
        let ran = try Spawn.run(swiftc, arguments + files, in: directory.url)
        return Run(status: ran.status, stdout: ran.output, stderr: "", exitedNormally: ran.exitedNormally)
    }
}
