import FlagCore
import Foundation

// flagbench: speed figures for BENCHMARKS.md, one line per figure: `name value unit`.
// Run in release mode: `swift run -c release flagbench [eval|decode|client|client-signed|client-enum|client-shared|all]
// [--quick]`; `--counting` runs the clients with refresh and telemetry on, so that their reads count evaluations
// (`configureRefresh`).

let arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let command = arguments.first { !$0.hasPrefix("--") } ?? "all"
let clock = ContinuousClock()

func report(_ name: String, _ value: Double, _ unit: String) {
    print(name, String(format: value < 10 ? "%.3f" : "%.1f", value), unit)
}

/// The best of several runs of `body`, in seconds: the figure least disturbed by other work on the machine.
func best(runs: Int, _ body: () -> Void) -> Double {
    var fastest = Double.infinity
    for _ in 0..<runs {
        let elapsed = clock.measure(body)
        fastest = min(fastest, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    return fastest
}

switch command {
case "eval":
    benchmarkEvaluation()
case "decode":
    benchmarkDecoding()
case "client":
    benchmarkClient()
case "client-signed":
    benchmarkSignedClient()
case "client-first-read":
    benchmarkFirstReads()
case "client-enum":
    benchmarkEnumReads()
case "client-shared":
    benchmarkSharedCache()
case "client-patch":
    benchmarkPatchWork(benchmarkDocument(flags: 1_000))
case "suite-eval", "suite-client-start":
    runSuiteCommand(command)
case "all":
    benchmarkEvaluation()
    benchmarkDecoding()
    benchmarkClient()
    benchmarkSignedClient()
default:
    FileHandle.standardError.write(
        Data("usage: flagbench [eval|decode|client|client-signed|client-enum|client-shared|all] [--quick]\n".utf8))
    exit(2)
}
