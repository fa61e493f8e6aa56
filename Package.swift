// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
        .executable(name: "flagbench", targets: ["flagbench"]),
        .executable(name: "flagctl", targets: ["flagctl"]),
    ],
    targets: [
        // The core: model, wire format, validation, evaluation, bucketing. Foundation only, no I/O.
        .target(name: "FlagCore"),
        .testTarget(name: "FlagCoreTests", dependencies: ["FlagCore"], resources: [.copy("Vectors")]),
        // The system SQLite (libsqlite3-dev on Debian); Apple platforms use their own `SQLite3` module.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(name: "flagbench", dependencies: ["FlagCore"]),
        // flagctl: the parser, the commands and their output live in FlagCLI; the executable only wires it to
        // the process. The tests depend on the executable so that it is built, and run it.
        .target(name: "FlagCLI", dependencies: ["FlagCore"]),
        .executableTarget(name: "flagctl", dependencies: ["FlagCLI"]),
        .testTarget(name: "FlagCLITests", dependencies: ["FlagCLI", "flagctl"]),
    ],
    swiftLanguageModes: [.v6]
)
