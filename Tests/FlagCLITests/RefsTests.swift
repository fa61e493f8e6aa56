import FlagTestSupport
import Foundation
import Testing

/// `flagctl refs` over a fixture tree with used, unused and unknown keys, run as a process.
@Suite("flagctl refs", .live)
struct RefsTests {
    static let set = #"""
        {
          "schema": 1, "set": "app", "version": 4,
          "flags": {
            "new-checkout": { "type": "bool", "kind": "release", "default": false },
            "api-rate-limit": { "type": "int", "kind": "ops", "default": 600 },
            "old-banner": { "type": "bool", "kind": "release", "default": false },
            "gone": { "type": "bool", "kind": "release", "default": false, "archived": true },
            "home.layout": { "type": "json", "kind": "ops", "default": {} }
          }
        }
        """#

    /// An app's sources: the generated file, a use of two generated names, a hand-written key with a typo and one
    /// without, and keys where nothing is read (a comment, a hidden build directory, CocoaPods, a text file).
    static func tree() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write("set.json", set)
        let manager = FileManager.default
        for folder in ["Sources/App", ".build/debug", "Pods/Lib"] {
            try manager.createDirectory(
                at: directory.url.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let generated = try Flagctl.run(
            ["generate", "swift", "--file", "set.json", "--output", "Sources/App/Flags.swift"], in: directory)
        #expect(generated.status == 0, "\(generated)")
        try directory.write(
            "Sources/App/Checkout.swift",
            """
            import FlagClient

            struct Checkout {
                let flags: any FeatureFlags
                func enabled() -> Bool { flags.value(.newCheckout) }
                // flags.value(.oldBanner) before the banner went
                func layout() -> JSONValue { flags.value(FlagKey<JSONValue>.homeLayout) }
            }

            """)
        try directory.write(
            "Sources/App/Legacy.swift",
            """
            import FlagClient

            extension FlagKey where Value == Bool {
                static let typo = FlagKey("new-chekout", default: false)
            }
            let limit = FlagKey<Int>("api-rate-limit", default: 100)
            /* FlagKey("in-a-comment", default: true) */
            let keys = FlagKeys("not-a-key")

            """)
        try directory.write(".build/debug/Hidden.swift", #"let hidden = FlagKey("hidden", default: true)"#)
        try directory.write("Pods/Lib/Pod.swift", #"let pod = FlagKey("pod", default: true)"#)
        try directory.write("notes.txt", #"FlagKey("text", default: true)"#)
        return directory
    }

    @Test("--json reports unused flags, unknown keys with their locations, and where every key is used")
    func json() throws {
        let directory = try Self.tree()
        let run = try Flagctl.run(["--json", "refs", "--file", "set.json"], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(
            run.stdout
                == #"{"references":{"api-rate-limit":["Sources/App/Legacy.swift:6"],"#
                + #""home.layout":["Sources/App/Checkout.swift:7"],"new-checkout":["Sources/App/Checkout.swift:5"],"#
                + #""new-chekout":["Sources/App/Legacy.swift:4"]},"#
                + #""unknown":[{"key":"new-chekout","locations":["Sources/App/Legacy.swift:4"]}],"#
                + #""unused":["old-banner"]}"# + "\n")
    }

    @Test("a flag that a used flag requires is used too")
    func aRequiredFlagIsUsed() throws {
        let directory = try Self.tree()
        // new-checkout, used in code, requires old-banner, which no code reads.
        let requiring = Self.set.replacingOccurrences(
            of: #""new-checkout": { "type": "bool", "kind": "release", "default": false }"#,
            with: #""new-checkout": { "type": "bool", "kind": "release", "default": false, "#
                + #""prerequisites": [{ "flag": "old-banner", "values": [true] }] }"#)
        #expect(requiring != Self.set)
        try directory.write("set.json", requiring)
        let run = try Flagctl.run(["--json", "refs", "--file", "set.json"], in: directory)
        #expect(run.stdout.hasSuffix(#""unused":[]}"# + "\n"), "\(run)")
    }

    @Test("for people: a summary, the unused flags, the unknown keys and the references; --fail exits 1")
    func table() throws {
        let directory = try Self.tree()
        let run = try Flagctl.run(["refs", "Sources", "--file", "set.json", "--fail"], in: directory)
        #expect(run.status == 1, "\(run)")
        #expect(
            run.stdoutLines == [
                "Sources: 3 Swift files, 4 keys used; set app, version 4: 1 unused, 1 unknown",
                "",
                "unused (in the set, no code reads them):",
                "  old-banner",
                "",
                "unknown (in code, not in the set; they always get their compiled-in default):",
                "  new-chekout  Sources/App/Legacy.swift:4",
                "",
                "references:",
                "  api-rate-limit  Sources/App/Legacy.swift:6",
                "  home.layout     Sources/App/Checkout.swift:7",
                "  new-checkout    Sources/App/Checkout.swift:5",
                "  new-chekout     Sources/App/Legacy.swift:4",
            ])
    }

    @Test("--fail exits 0 when every flag is used and every key known")
    func clean() throws {
        let directory = try Self.tree()
        try directory.write(
            "Sources/App/Legacy.swift",
            """
            import FlagClient
            let uses: [Any] = [FlagKey<Bool>.oldBanner, FlagKey<Int>.apiRateLimit]

            """)
        let run = try Flagctl.run(["refs", "--file", "set.json", "--fail"], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdoutLines.first == ".: 3 Swift files, 4 keys used; set app, version 4: 0 unused, 0 unknown")
    }

    @Test("a path that does not exist is a failure naming it")
    func missingPath() throws {
        let directory = try Self.tree()
        let run = try Flagctl.run(["refs", "nowhere", "--file", "set.json"], in: directory)
        #expect(run.status == 1)
        #expect(run.stderr == "error: cannot scan 'nowhere': no such file or directory\n")
    }
}
