import FlagCLI
import FlagTestSupport
import Foundation
import Testing

/// `flagctl lint`, run as a process.
@Suite("flagctl lint", .live)
struct LintTests {
    /// Six problems, one of each kind SPEC §3 names; `good` is sound.
    static let brokenSet = """
        {
          "schema": 1, "set": "broken", "version": 3,
          "cohorts": {
            "beta": { "include": ["u-1"] },
            "loop-a": { "groups": [[ { "attribute": "unitID", "op": "in_cohort", "values": ["loop-b"] } ]] },
            "loop-b": { "groups": [[ { "attribute": "unitID", "op": "in_cohort", "values": ["loop-a"] } ]] }
          },
          "flags": {
            "good": { "type": "bool", "kind": "ops", "default": true },
            "wrong-default": { "type": "int", "kind": "ops", "default": "ten" },
            "ghost-cohort": { "type": "bool", "kind": "ops", "default": false,
                              "rules": [ { "name": "r", "cohort": "gamma", "value": true } ] },
            "bad-regex": { "type": "bool", "kind": "ops", "default": false,
              "rules": [ { "name": "r", "value": true,
                           "conditions": [ { "attribute": "email", "op": "matches", "values": ["(["] } ] } ] },
            "too-much": { "type": "bool", "kind": "ops", "default": false,
                          "rollout": { "percent": 150, "value": true } },
            "uneven": { "type": "string", "kind": "experiment", "default": "a",
                        "rules": [ { "name": "s", "conditions": [],
                                     "split": [ { "value": "a", "weight": 50 }, { "value": "b", "weight": 40 } ] } ] }
          }
        }
        """

    static let brokenPaths = [
        "cohorts.loop-b",
        "flags.bad-regex.rules[0].conditions[0].values[0]",
        "flags.ghost-cohort.rules[0].cohort",
        "flags.too-much.rollout.percent",
        "flags.uneven.rules[0].split",
        "flags.wrong-default.default",
    ]

    @Test("the demo set is clean: exit 0 and a summary of what it holds")
    func demo() throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(["lint", try directory.copyDemo()], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "demo.json: ok, 7 flags, 4 cohorts, version 1\n")
        #expect(run.stderr == "")
    }

    @Test("--json reports the clean demo set as one object")
    func demoJSON() throws {
        let directory = try TemporaryDirectory()
        let run = try Flagctl.run(["--json", "lint", try directory.copyDemo()], in: directory)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == #"{"file":"demo.json","ok":true,"problems":[]}"# + "\n")
    }

    @Test("every problem is listed with its JSON path, then a count; exit 1")
    func severalProblems() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("broken.json", Self.brokenSet)
        let run = try Flagctl.run(["lint", file], in: directory)
        #expect(run.status == 1, "\(run)")
        let lines = run.stdoutLines
        #expect(lines.count == Self.brokenPaths.count + 1)
        #expect(lines.dropLast().map { String($0.prefix { $0 != ":" }) } == Self.brokenPaths)
        #expect(lines.contains("flags.too-much.rollout.percent: 150 is outside 0–100"))
        #expect(lines.contains("flags.ghost-cohort.rules[0].cohort: unknown cohort 'gamma'"))
        #expect(lines.contains("flags.uneven.rules[0].split: split weights sum to 90, not 100"))
        #expect(lines.last == "broken.json: 6 problems")
        #expect(run.stderr == "")
    }

    @Test("--json lists the same problems as objects with path and message")
    func severalProblemsJSON() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("broken.json", Self.brokenSet)
        let run = try Flagctl.run(["lint", file, "--json"], in: directory)
        #expect(run.status == 1, "\(run)")
        let report = try #require(try Flagctl.jsonObjects(run).first)
        #expect(report["file"] as? String == "broken.json")
        #expect(report["ok"] as? Bool == false)
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect(problems.compactMap { $0["path"] as? String } == Self.brokenPaths)
        #expect(problems.allSatisfy { !(($0["message"] as? String) ?? "").isEmpty })
    }

    @Test("malformed JSON is reported as FILE:LINE:COLUMN: message; exit 1")
    func malformed() throws {
        let directory = try TemporaryDirectory()
        // Line 3, column 12 is the ']' where a member name must be.
        let file = try directory.write("bad.json", "{\"schema\": 1,\n \"set\": \"x\",\n \"flags\": {]\n")
        let run = try Flagctl.run(["lint", file], in: directory)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.first == "bad.json:3:12: expected a member name in double quotes, found ']'")
        #expect(run.stdoutLines.last == "bad.json: 1 problem (not a flag-set document)")

        let json = try Flagctl.run(["lint", file, "--json"], in: directory)
        let problem = try #require((try Flagctl.jsonObjects(json).first?["problems"] as? [[String: Any]])?.first)
        #expect(problem["line"] as? Int == 3)
        #expect(problem["column"] as? Int == 12)
    }

    @Test("a document that is JSON but not an object is reported the same way")
    func wrongShape() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.write("array.json", "[{\"schema\": 1}]")
        let run = try Flagctl.run(["lint", file], in: directory)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.first == "array.json:1:1: a flag set must be a JSON object, found an array")
    }

    @Test("a missing file or a directory fails with a message naming it; nothing on stdout")
    func unreadable() throws {
        let directory = try TemporaryDirectory()
        let missing = try Flagctl.run(["lint", "missing.json"], in: directory)
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stdout == "")
        #expect(missing.stderrLines == ["error: cannot read 'missing.json': No such file or directory"])
        let folder = try Flagctl.run(["lint", "."], in: directory)
        #expect(folder.status == 1, "\(folder)")
        #expect(folder.stderrLines == ["error: cannot read '.': it is a directory, not a file"])
    }

    @Test("binary garbage is a problem, never a crash")
    func garbage() throws {
        let directory = try TemporaryDirectory()
        var bytes: [UInt8] = [0xFF, 0xFE, 0x00, 0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A]
        var state: UInt32 = 2_463_534_242
        for _ in 0..<4096 {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            bytes.append(UInt8(truncatingIfNeeded: state))
        }
        let file = try directory.write("garbage.json", Data(bytes))
        let run = try Flagctl.run(["lint", file], in: directory)
        #expect(run.exitedNormally)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.first?.hasPrefix("garbage.json:1:1: ") == true)
    }
}

/// Hostile documents through the whole lint path, in-process (fast): each is a problem, none traps.
@Suite("flagctl lint robustness", .live)
struct LintRobustnessTests {
    @Test(
        "hostile input yields exit 1 and a report",
        arguments: [
            "", "   \n\t", "\u{FEFF}{}", "{}", "null", "{\"schema\": 1", String(repeating: "[", count: 100_000),
            String(repeating: "{\"a\":", count: 100_000), "{\"schema\": 1e999999, \"set\": \"x\"}",
            "{\"schema\": 1, \"set\": \"x\", \"flags\": []}", "{\"schema\": 1, \"set\": \"x\", \"flags\": {\"f\": 7}}",
            "{\"schema\": 99999999999999999999999}", "{\"schema\": 1, \"set\": \"\\ud800\"}", "{\"a\": \"\u{0}\"}",
        ])
    func hostile(_ text: String) throws {
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent(try directory.write("x.json", text)).path
        let run = runInProcess(["lint", path])
        #expect(run.status == 1, "\(run)")
        #expect(run.stdoutLines.last?.hasPrefix("\(path): ") == true)
        let json = runInProcess(["lint", path, "--json"])
        #expect(json.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(report?["ok"] as? Bool == false)
    }
}
