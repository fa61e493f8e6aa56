// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
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
        // Linux calls Swift's Glibc module lacks (epoll, eventfd, accept4); `_GNU_SOURCE` is set in its header.
        .target(name: "CSystem"),
        // The server as a library (the HTTP engine first); its executable stays a thin composition root.
        .target(name: "FlagServer", dependencies: ["CSystem"]),
        .testTarget(name: "FlagServerTests", dependencies: ["FlagServer"]),
    ],
    swiftLanguageModes: [.v6]
)
