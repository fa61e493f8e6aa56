// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
        .executable(name: "flagbench", targets: ["flagbench"]),
    ],
    targets: [
        // The core: model, wire format, validation, evaluation, bucketing. Foundation only, no I/O.
        .target(name: "FlagCore"),
        .testTarget(
            name: "FlagCoreTests", dependencies: ["FlagCore"], resources: [.copy("Vectors"), .copy("JSONSuite")]),
        // The system SQLite (libsqlite3-dev on Debian); Apple platforms use their own `SQLite3` module.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(name: "flagbench", dependencies: ["FlagCore"]),
    ],
    swiftLanguageModes: [.v6]
)
