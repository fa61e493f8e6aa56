import PackagePlugin

/// `swift package generate-flags --file SET.json (--output FILE | --target NAME) [options]`: runs
/// `flagctl generate swift` on a flag-set file checked into the package, writing the Swift file into the package.
///
/// The arguments are `generate swift`'s (docs/codegen.md); `--target NAME` stands for
/// `--output <NAME's directory>/Flags.swift`. Paths are relative to the package. Reading from a server needs network
/// access, which this plugin does not ask for: `swift package generate-flags-from-server` does (a command plugin's
/// permissions are fixed in the manifest, so the two sources are two plugins).
///
/// What the two plugins share is in Flagctl.swift, a link to Plugins/Shared/Flagctl.swift.
@main
struct GenerateFlags: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        try Flagctl.generate(context, arguments: arguments) { rest in
            guard Flagctl.readsFile(rest) else {
                throw PluginFailure(
                    "generate-flags reads a flag-set file: pass --file SET.json (for a server, use "
                        + "'swift package generate-flags-from-server --set NAME --server URL')")
            }
        }
    }
}

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin

    extension GenerateFlags: XcodeCommandPlugin {
        /// From an Xcode project (File ▸ Packages, or the project's context menu): paths are relative to the
        /// project's directory, and `--output` names the file.
        func performCommand(context: XcodePluginContext, arguments: [String]) throws {
            try Flagctl.generate(context, arguments: arguments)
        }
    }
#endif
