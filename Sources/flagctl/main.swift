import FlagCLI
import Foundation

// The composition root: the process's arguments, environment, clock and standard streams.
let status = FlagCTL.main(
    arguments: CommandLine.arguments.dropFirst(),
    environment: ProcessInfo.processInfo.environment,
    now: { Date() },
    console: Console.standardStreams())
exit(status)
