import Foundation
import PackagePlugin

#if canImport(XcodeProjectPlugin)
    import XcodeProjectPlugin
#endif

/// Running flagctl, for both command plugins. A plugin cannot import a library of its package, so this file is
/// each plugin's own through a symbolic link in its directory (Plugins/<plugin>/Flagctl.swift), which SwiftPM
/// compiles as the plugin's source.
enum Flagctl {
    /// Whether `arguments` name a flag-set file (`--file SET.json` or `--file=SET.json`).
    static func readsFile(_ arguments: [String]) -> Bool {
        arguments.contains { $0 == "--file" || $0.hasPrefix("--file=") }
    }

    /// Runs `flagctl generate swift` for `swift package`: `check` first refuses the arguments the plugin does not
    /// take, then `--target NAME` stands for `--output <NAME's directory>/Flags.swift`, and paths are relative to the
    /// package.
    static func generate(
        _ context: PluginContext, arguments: [String], check: ([String]) throws -> Void
    ) throws {
        var extractor = ArgumentExtractor(arguments)
        let targets = extractor.extractOption(named: "target")
        var rest = extractor.remainingArguments
        try check(rest)
        if let name = targets.first {
            guard let target = try context.package.targets(named: [name]).first else {
                throw PluginFailure("no target '\(name)' in the package")
            }
            rest += ["--output", target.directoryURL.appendingPathComponent("Flags.swift").path]
        }
        let flagctl = try context.tool(named: "flagctl").url
        try generate(flagctl, arguments: rest, in: context.package.directoryURL)
    }

    #if canImport(XcodeProjectPlugin)
        /// Runs `flagctl generate swift` for an Xcode project: paths are relative to the project's directory, and
        /// `--output` names the file.
        static func generate(_ context: XcodePluginContext, arguments: [String]) throws {
            let flagctl = try context.tool(named: "flagctl").url
            try generate(flagctl, arguments: arguments, in: context.xcodeProject.directoryURL)
        }
    #endif

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
