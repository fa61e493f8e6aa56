import FlagCore
import Foundation

@testable import FlagCLI

/// Flag sets for the generator's tests.
enum CodegenFixtures {
    /// Descriptions, owners, keys and values written to break out of comments and string literals, or to hide code
    /// behind invisible and reordering characters; enum flags whose values are keywords, names the enum declares,
    /// leading digits, emoji and values that make one case name, and whose keys make type names that are taken. `HostileFlags.swift` beside this file is generated from it and
    /// compiled into the tests, so that the values are read back through the real `FlagKey`.
    static let hostile = #"""
        {
          "schema": 1, "set": "hostile", "version": 7,
          "flags": {
            "comment-breaker": {
              "type": "string", "kind": "ops", "default": "\"); fatalError(\"pwned\") //",
              "description": "ends here */ let injected = 1 /* \n static let newline = 2 \r\n\u2028 static let ls = 3 \u2029 ps \u202Eevil\u202C \u2066iso\u2069 \u200E\u200F \u0000 \t tab \u0085 nel \ufeff bom",
              "owner": "team\nstatic let owner = 1 // \u202E"
            },
            "interpolation": {
              "type": "string", "kind": "ops", "default": "\\(fatalError()) \\\\( \\ \"\"\" #\"raw\"# \\u{41}",
              "description": "\\(fatalError()) and \"\"\" and `code`"
            },
            "unicode": {
              "type": "string", "kind": "ops", "default": "\u0301café 😀 \u202Eright-to-left\u202C \u2028 line \u2029 para \u0000 nul \u001b[31m \u200B zero-width"
            },
            "payload": {
              "type": "json", "kind": "ops",
              "default": { "\"": "\\(", "a\nb": ["*/", "\u202E", null, true, -0.0, 1.5e300, 5e-324],
                           "big": 9223372036854775807, "small": -9223372036854775808, "": {}, "list": [] }
            },
            "limits": { "type": "int", "kind": "ops", "default": -9223372036854775808 },
            "ratio": { "type": "double", "kind": "ops", "default": 0.1 },
            "tiny": { "type": "double", "kind": "ops", "default": 5e-324 },
            "whole": { "type": "double", "kind": "ops", "default": 3 },
            "3d-touch": { "type": "bool", "kind": "ops", "default": true },
            "default": { "type": "bool", "kind": "ops", "default": true },
            "self": { "type": "bool", "kind": "ops", "default": true },
            "init": { "type": "bool", "kind": "ops", "default": false },
            "type": { "type": "bool", "kind": "ops", "default": true },
            "new-checkout": { "type": "bool", "kind": "release", "default": false },
            "new.checkout": { "type": "bool", "kind": "release", "default": true },
            "new_checkout": { "type": "bool", "kind": "release", "default": false },
            "a-b.c_d": { "type": "bool", "kind": "ops", "default": true },
            "theme": {
              "type": "string", "kind": "ops", "default": "default",
              "values": ["blue", "default", "self", "Type", "init", "rawValue", "allCases", "3d", "\ud83d\ude00",
                         "\ud83c\udf89", "dark-mode", "dark mode", "darkMode", "caf\u00e9", "\"); fatalError(\"pwned\") //",
                         "\\(fatalError())", "a\nb \u202Eevil\u202C", "\u0301accent", "_", "true"]
            },
            "string": { "type": "string", "kind": "ops", "default": "a", "values": ["a"] },
            "new-theme": { "type": "string", "kind": "ops", "default": "b", "values": ["a", "b"] },
            "new_theme": { "type": "string", "kind": "ops", "default": "a", "values": ["a", "b"] }
          }
        }
        """#

    /// The options `HostileFlags.swift` is generated with.
    static let hostileOptions = SwiftFlagFile.Options(access: .internal, namespace: "HostileFlags")

    /// Every kind of flag end of life: expired with a kept value, expired without one, archived after expiring,
    /// archived without an expiry, killed, and one still running; each with targeting that must not leak into the
    /// default.
    static let lifecycle = #"""
        {
          "schema": 1, "set": "life", "version": 12,
          "cohorts": { "qa": { "include": ["u-1"] } },
          "flags": {
            "expired-kept": {
              "type": "bool", "kind": "release", "default": false, "expiresAt": "2026-01-10T00:00:00Z",
              "expiredValue": true, "description": "Checkout v2", "owner": "payments",
              "rules": [ { "name": "all", "conditions": [], "value": false } ]
            },
            "expired-plain": {
              "type": "int", "kind": "release", "default": 5, "expiresAt": "2026-02-01T12:30:00Z",
              "rollout": { "percent": 100, "value": 9 }
            },
            "archived-kept": {
              "type": "string", "kind": "release", "default": "old", "expiresAt": "2025-06-01T00:00:00Z",
              "expiredValue": "new \"quoted\" \u202E", "archived": true
            },
            "archived-plain": { "type": "double", "kind": "ops", "default": 2.5, "archived": true },
            "killed": { "type": "bool", "kind": "kill-switch", "default": true, "killed": true, "killValue": false },
            "running": {
              "type": "json", "kind": "experiment", "default": { "columns": 2 }, "expiresAt": "2099-01-01T00:00:00Z",
              "expiredValue": { "columns": 3 },
              "overrides": [ { "cohort": "qa", "value": { "columns": 4 } } ]
            }
          }
        }
        """#

    /// The time the lifecycle set is generated at: after the expiries above, before `running`'s.
    static let now = Date(timeIntervalSince1970: 1_796_205_605)  // 2026-12-02T10:00:05Z

    /// A set compiled from a document; fails the test when it has problems.
    static func compiled(_ document: String) throws -> CompiledFlagSet {
        let set = CompiledFlagSet(try FlagSet.decode(Array(document.utf8)))
        guard set.problems.isEmpty else { throw FixtureError(description: "\(set.problems)") }
        return set
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
    }
}
