import Foundation
import PackagePlugin

/// `swift package generate-flags-from-server --set NAME [--server URL] (--output FILE | --target NAME) [options]`:
/// runs `flagctl generate swift` against a FlagServer, writing the Swift file into the package.
///
/// The token comes from `FLAGCTL_TOKEN` (never from the command line, where it would stay in shell history), the
/// server from `--server` or `FLAGCTL_SERVER`. This plugin asks for network access; `swift package generate-flags`
/// reads a checked-in file and does not.
///
/// Its argument handling is GenerateFlags.swift's twin: a plugin cannot import a library target, so the two cannot share it.
@main
struct GenerateFlagsFromServer: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let targets = extractor.extractOption(named: "target")
        var rest = extractor.remainingArguments
        if rest.contains(where: { $0 == "--file" || $0.hasPrefix("--file=") }) {
            throw PluginFailure("to read a flag-set file, use 'swift package generate-flags --file SET.json'")
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

    extension GenerateFlagsFromServer: XcodeCommandPlugin {
        /// From an Xcode project: paths are relative to the project's directory, and `--output` names the file.
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
