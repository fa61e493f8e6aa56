// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
        .library(name: "FlagSQLite", targets: ["FlagSQLite"]),
        .library(name: "FlagServer", targets: ["FlagServer"]),
        .executable(name: "flagbench", targets: ["flagbench"]),
        .executable(name: "flagserver", targets: ["FlagServerMain"]),
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
        // What Swift's Glibc module lacks: epoll, accept4, eventfd.
        .target(name: "CSystem"),
        .target(name: "FlagServer", dependencies: ["FlagCore", "FlagSQLite", "CSystem"]),
        // `flagserver`: the command line and the composition root; everything else is in FlagServer. Not named
        // `flagserver` so that it cannot clash with `FlagServer` on a case-insensitive file system.
        .executableTarget(name: "FlagServerMain", dependencies: ["FlagServer"]),
        // Speed figures for BENCHMARKS.md.
        .executableTarget(name: "flagbench", dependencies: ["FlagCore"]),
        .testTarget(name: "FlagCoreTests", dependencies: ["FlagCore"], resources: [.copy("Vectors")]),
        .testTarget(name: "FlagSQLiteTests", dependencies: ["FlagSQLite"]),
        .testTarget(name: "FlagServerTests", dependencies: ["FlagServer", "FlagSQLite", "FlagCore"]),
    ],
    swiftLanguageModes: [.v6]
)
