import FlagCore
import Foundation

/// `flagdemo`'s command line; the server and key default to `FLAGSTAFF_SERVER` and `FLAGSTAFF_SDK_KEY`.
struct DemoOptions: Equatable {
    var server: URL
    var sdkKey: String
    var set = "demo"
    var cacheDirectory: URL
    var users = ["u-1", "qa-1", "anna"]
    /// How long to watch for kills; 0 prints the values and exits.
    var watchSeconds = 60.0
    /// Exit at the first kill (status 0), or with status 1 when none came within `watchSeconds`.
    var once = false
    /// The app's name and version in telemetry reports (`--app NAME/VERSION`); the bundle's when `nil`.
    var app: TelemetryReport.Software?
    var help = false

    static let usage = """
        usage: flagdemo [--server URL] [--sdk-key KEY] [--set NAME] [--cache DIR] [--users a,b,c]
                        [--watch SECONDS] [--once] [--app NAME/VERSION]
          --server URL      the FlagServer (default $FLAGSTAFF_SERVER)
          --sdk-key KEY     an SDK key of the set (default $FLAGSTAFF_SDK_KEY)
          --set NAME        the flag set (default demo)
          --cache DIR       the client's cache directory (default $TMPDIR/flagdemo-cache)
          --users a,b,c     the users to open sessions for (default u-1,qa-1,anna)
          --watch SECONDS   how long to watch for kills (default 60; 0 prints the values and exits)
          --once            exit at the first kill (status 0), or with 1 when none came in time
          --app NAME/VERSION  the app named in telemetry reports (default: the bundle's, if any)
        """

    /// Parses `arguments` (without the program name); throws a message naming the bad argument.
    static func parse(_ arguments: [String], environment: [String: String]) throws -> DemoOptions {
        var server = environment["FLAGSTAFF_SERVER"]
        var sdkKey = environment["FLAGSTAFF_SDK_KEY"]
        var options = DemoOptions(
            server: URL(fileURLWithPath: "/"), sdkKey: "",
            cacheDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("flagdemo-cache"))
        var rest = arguments[...]
        func value(_ name: String) throws -> String {
            guard let value = rest.popFirst() else { throw DemoUsageError("\(name) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--server": server = try value(argument)
            case "--sdk-key": sdkKey = try value(argument)
            case "--set": options.set = try value(argument)
            case "--cache": options.cacheDirectory = URL(fileURLWithPath: try value(argument), isDirectory: true)
            case "--users":
                options.users = try value(argument).split(separator: ",").map(String.init)
                guard !options.users.isEmpty else { throw DemoUsageError("--users needs at least one user id") }
            case "--watch":
                let text = try value(argument)
                guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                    throw DemoUsageError("--watch takes a number of seconds, not '\(text)'")
                }
                options.watchSeconds = seconds
            case "--once": options.once = true
            case "--app":
                let text = try value(argument)
                let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw DemoUsageError("--app takes NAME/VERSION, e.g. shop/5.3.0, not '\(text)'")
                }
                options.app = TelemetryReport.Software(name: parts[0], version: parts[1])
            case "--help", "-h": options.help = true
            default: throw DemoUsageError("unknown argument '\(argument)'")
            }
        }
        if options.help { return options }
        guard let server, let url = URL(string: server), url.host != nil else {
            throw DemoUsageError("give the server with --server URL or FLAGSTAFF_SERVER, e.g. http://127.0.0.1:8080")
        }
        guard let sdkKey, !sdkKey.isEmpty else {
            throw DemoUsageError("give an SDK key of the set with --sdk-key KEY or FLAGSTAFF_SDK_KEY")
        }
        options.server = url
        options.sdkKey = sdkKey
        return options
    }
}

/// A command line `flagdemo` cannot run with; the message says which argument to fix.
struct DemoUsageError: Error, Equatable, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
