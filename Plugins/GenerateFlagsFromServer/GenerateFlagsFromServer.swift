import PackagePlugin

/// `swift package generate-flags-from-server --set NAME [--server URL] (--output FILE | --target NAME) [options]`:
/// runs `flagctl generate swift` against a FlagServer, writing the Swift file into the package.
///
/// The token comes from `FLAGCTL_TOKEN` (never from the command line, where it would stay in shell history), the
/// server from `--server` or `FLAGCTL_SERVER`. This plugin asks for network access; `swift package generate-flags`
/// reads a checked-in file and does not.
///
/// What the two plugins share is in Flagctl.swift, a link to Plugins/Shared/Flagctl.swift.
@main
struct GenerateFlagsFromServer: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        try Flagctl.generate(context, arguments: arguments) { rest in
            if Flagctl.readsFile(rest) {
                throw PluginFailure("to read a flag-set file, use 'swift package generate-flags --file SET.json'")
            }
        }
    }
}

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin

    extension GenerateFlagsFromServer: XcodeCommandPlugin {
        /// From an Xcode project: paths are relative to the project's directory, and `--output` names the file.
        func performCommand(context: XcodePluginContext, arguments: [String]) throws {
            try Flagctl.generate(context, arguments: arguments)
        }
    }
#endif
