// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
        .library(name: "FlagSQLite", targets: ["FlagSQLite"]),
        .library(name: "FlagServer", targets: ["FlagServer"]),
        .library(name: "FlagClient", targets: ["FlagClient"]),
        .library(name: "FlagClientTesting", targets: ["FlagClientTesting"]),
        .executable(name: "flagbench", targets: ["flagbench"]),
        .executable(name: "flagctl", targets: ["flagctl"]),
    ],
    targets: [
        // The core: model, wire format, validation, evaluation, bucketing. Foundation only, no I/O.
        .target(name: "FlagCore"),
        // The system SQLite (libsqlite3-dev on Debian); Apple platforms use their own `SQLite3` module.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // A small SQLite wrapper shared by the server's store and the client's cache.
        .target(name: "FlagSQLite", dependencies: [.target(name: "CSQLite", condition: .when(platforms: [.linux]))]),
        // The server's logic: HTTP, routes, the versioned store, auth. Its executable stays a thin main.
        .target(name: "FlagServer", dependencies: ["FlagCore", "FlagSQLite"]),
        // The library services and apps embed: keys, sessions, the SQLite cache, the refresh transport, overrides.
        .target(name: "FlagClient", dependencies: ["FlagCore", "FlagSQLite"]),
        // A fixed in-memory `FeatureFlags` for tests and previews.
        .target(name: "FlagClientTesting", dependencies: ["FlagClient", "FlagCore"]),
        // Speed figures for BENCHMARKS.md.
        .executableTarget(name: "flagbench", dependencies: ["FlagCore", "FlagClient"]),
        // flagctl: the parser, the commands and their output live in FlagCLI; the executable only wires it to
        // the process. The tests depend on the executable so that it is built, and run it.
        .target(name: "FlagCLI", dependencies: ["FlagCore"]),
        .executableTarget(name: "flagctl", dependencies: ["FlagCLI"]),
        .testTarget(name: "FlagCLITests", dependencies: ["FlagCLI", "flagctl"]),
        .testTarget(name: "FlagCoreTests", dependencies: ["FlagCore"], resources: [.copy("Vectors")]),
        .testTarget(name: "FlagSQLiteTests", dependencies: ["FlagSQLite"]),
        .testTarget(name: "FlagClientTests", dependencies: ["FlagClient", "FlagClientTesting", "FlagCore", "FlagSQLite"]),
        .testTarget(name: "FlagServerTests", dependencies: ["FlagServer", "FlagSQLite", "FlagCore"]),
    ],
    swiftLanguageModes: [.v6]
)
