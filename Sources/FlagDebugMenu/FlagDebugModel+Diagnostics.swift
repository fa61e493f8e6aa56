import FlagClient
import Foundation

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension FlagDebugModel {
    /// A text to paste into a bug report: the SDK and app versions, the state, the version and last update, the
    /// server (scheme, host and port) and set, the refresh mode, and how many flags and overrides there are. It
    /// holds no SDK key, token, unit id, attribute, flag value or override text.
    ///
    /// ```text
    /// FlagClient 2.0.0
    /// state: live: version 42, confirmed by the server
    /// version: 42
    /// last update: 2026-12-06T20:14:03Z
    /// server: https://flags.example.com
    /// set: ios-prod
    /// refresh: stream
    /// flags: 31 in the set, 2 declared by the app only, 0 unreadable
    /// overrides: 3 (2 set from the app, 1 from the environment or a file)
    /// ```
    public var diagnostics: String {
        let configuration = client.configuration
        let overrides = client.overridesSet
        let fromApp = overrides.values.count { $0.isFromAPI }
        var lines = ["\(FlagClient.sdk.name) \(FlagClient.sdk.version)"]
        if let app = configuration.app { lines.append("app: \(app.name) \(app.version)") }
        lines += [
            "state: \(stateText)",
            "version: \(versionText)",
            "last update: \(lastUpdateText)",
            "server: \(server)",
            "set: \(setName)",
            "refresh: \(configuration.refresh)",
            "flags: \(rows.count { $0.isInSet }) in the set, \(rows.count { !$0.isInSet }) declared by the app only, "
                + "\(rows.count { $0.type == "unreadable" }) unreadable",
        ]
        if isReadOnly {
            lines.append("overrides: disabled")
        } else {
            lines.append(
                "overrides: \(overrides.count) (\(fromApp) set from the app, \(overrides.count - fromApp) from the "
                    + "environment or a file)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
