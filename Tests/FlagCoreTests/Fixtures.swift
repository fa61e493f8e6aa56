import FlagCore
import Foundation

/// Shared fixtures: the demo set from config/, dates, and a quick way to decode a JSON literal.
enum Fixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var demoBytes: [UInt8] {
        get throws { Array(try Data(contentsOf: repositoryRoot.appendingPathComponent("config/flagsets/demo.json"))) }
    }

    static func date(_ text: String) -> Date {
        guard let date = ISO8601.parse(text) else { preconditionFailure("bad test date \(text)") }
        return date
    }

    static func decode(_ json: String) throws -> FlagSet {
        try FlagSet.decode(Array(json.utf8))
    }

    static func compile(_ json: String) throws -> CompiledFlagSet {
        CompiledFlagSet(try decode(json))
    }

    /// A set with one flag given as a JSON object literal, plus optional cohorts.
    static func set(flag: String, key: String = "f", cohorts: String = "{}") -> String {
        #"{"schema":1,"set":"test","version":7,"cohorts":\#(cohorts),"flags":{"\#(key)":\#(flag)}}"#
    }
}
