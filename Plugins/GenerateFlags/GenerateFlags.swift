import Foundation
import PackagePlugin

/// `swift package generate-flags --file SET.json (--output FILE | --target NAME) [options]`: runs
/// `flagctl generate swift` on a flag-set file checked into the package, writing the Swift file into the package.
///
/// The arguments are `generate swift`'s (docs/codegen.md); `--target NAME` stands for
/// `--output <NAME's directory>/Flags.swift`. Paths are relative to the package. Reading from a server needs network
/// access, which this plugin does not ask for: `swift package generate-flags-from-server` does (a command plugin's
/// permissions are fixed in the manifest, so the two sources are two plugins).
///
/// Its argument handling is GenerateFlagsFromServer.swift's twin: a plugin cannot import a library target, so the two cannot share it.
@main
struct GenerateFlags: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let targets = extractor.extractOption(named: "target")
        var rest = extractor.remainingArguments
        guard rest.contains(where: { $0 == "--file" || $0.hasPrefix("--file=") }) else {
            throw PluginFailure(
                "generate-flags reads a flag-set file: pass --file SET.json (for a server, use "
                    + "'swift package generate-flags-from-server --set NAME --server URL')")
        }
        if let name = targets.first {
            guard let target = try context.package.targets(named: [name]).first else {
                throw PluginFailure("no target '\(name)' in the package")
            }
            rest += ["--output", target.directoryURL.appendingPathComponent("Flags.swift").path]
        }
        let flagctl = try context.tool(named: "flagctl").url
        try Flagctl.generate(flagctl, arguments: rest, in: context.package.directoryURL)
    }
}

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin

    extension GenerateFlags: XcodeCommandPlugin {
        /// From an Xcode project (File ▸ Packages, or the project's context menu): paths are relative to the
        /// project's directory, and `--output` names the file.
        func performCommand(context: XcodePluginContext, arguments: [String]) throws {
            let flagctl = try context.tool(named: "flagctl").url
            try Flagctl.generate(flagctl, arguments: arguments, in: context.xcodeProject.directoryURL)
        }
    }
#endif

/// Running flagctl. The same in both plugins: a plugin cannot import a library of its package.
enum Flagctl {
    /// Runs `flagctl generate swift ARGUMENTS` in `directory`, its output passed through; a failure throws.
    static func generate(_ flagctl: URL, arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = flagctl
        process.arguments = ["generate", "swift"] + arguments
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw PluginFailure("flagctl generate swift exited with \(process.terminationStatus)")
        }
    }
}

/// A failure the plugin reports to SwiftPM.
struct PluginFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
