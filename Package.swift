// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Flagstaff",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "FlagCore", targets: ["FlagCore"]),
        .library(name: "FlagAPI", targets: ["FlagAPI"]),
        .library(name: "FlagSQLite", targets: ["FlagSQLite"]),
        .library(name: "FlagHTTP", targets: ["FlagHTTP"]),
        .library(name: "FlagServer", targets: ["FlagServer"]),
        .library(name: "FlagClient", targets: ["FlagClient"]),
        .library(name: "FlagClientTesting", targets: ["FlagClientTesting"]),
        .library(name: "FlagDebugMenu", targets: ["FlagDebugMenu"]),
        .library(name: "FlagSigning", targets: ["FlagSigning"]),
        .executable(name: "flagserver", targets: ["FlagServerMain"]),
        .executable(name: "flagctl", targets: ["flagctl"]),
        .executable(name: "flagbench", targets: ["flagbench"]),
        .executable(name: "flagdemo", targets: ["flagdemo"]),
        .plugin(name: "GenerateFlags", targets: ["GenerateFlags"]),
        .plugin(name: "GenerateFlagsFromServer", targets: ["GenerateFlagsFromServer"]),
    ],
    // `swift build --traits Postgres` adds the PostgreSQL store (libpq from Debian's libpq-dev); the plain build
    // needs nothing beyond SQLite, and its flagserver says how to get the store when asked for it.
    traits: [.trait(name: "Postgres", description: "The PostgreSQL store, for several flagservers on one database")],
    targets: [
        // The core: model, wire format, validation, evaluation, bucketing. Foundation only, no I/O.
        .target(name: "FlagCore"),
        // The admin API as data: one `Endpoint` per route (method, template, least role, request and answer types),
        // the request and answer shapes, and the coder that writes and reads them with FlagCore's JSON. The server,
        // flagctl and the dashboard (through `/ui/endpoints.json`) all use it, so a path or a member is written once.
        .target(name: "FlagAPI", dependencies: ["FlagCore"]),
        // The system SQLite (libsqlite3-dev on Debian); Apple platforms use their own `SQLite3` module.
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // A small SQLite wrapper shared by the server's store and the client's cache.
        .target(name: "FlagSQLite", dependencies: [.target(name: "CSQLite", condition: .when(platforms: [.linux]))]),
        // libpq, PostgreSQL's client library (libpq-dev on Debian), with the `Postgres` trait only.
        .systemLibrary(name: "CPostgres", path: "Sources/CPostgres", providers: [.apt(["libpq-dev"])]),
        // A small libpq wrapper for the server's PostgreSQL store: connections, statements, notifications. Without
        // the `Postgres` trait it keeps its API but links no libpq, and connecting throws `PostgresError.notBuilt`,
        // so that the plain build needs no libpq and still type-checks the store.
        .target(
            name: "FlagPostgres", dependencies: [.target(name: "CPostgres", condition: .when(traits: ["Postgres"]))]),
        // OpenSSL's libcrypto (libssl-dev on Debian), for FlagSigning on Linux; Apple platforms use CryptoKit.
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", providers: [.apt(["libssl-dev"])]),
        // Signed flag sets: Ed25519 keys and signatures, the signed message and signature header formats,
        // and private keys sealed with AES-256-GCM. No cryptography of its own: libcrypto on Linux, CryptoKit on
        // Apple platforms.
        .target(
            name: "FlagSigning",
            dependencies: ["FlagCore", .target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
        // The one lock every module uses (`Locked`, whose comment gives the policy). A target of its own so that
        // modules that must not import FlagCore (the HTTP engine) can use it too.
        .target(name: "FlagLock"),
        // What Swift's Glibc module lacks: epoll, accept4, eventfd.
        .target(name: "CSystem"),
        // The HTTP/1.1 engine: event loops, connections, the parser, responses, streams. It knows nothing of
        // Flagstaff; what it answers before a route is known is rendered by a function the application gives it.
        .target(name: "FlagHTTP", dependencies: ["FlagLock", "CSystem"]),
        // The server's logic on top of the engine: routes, the service, the versioned store, auth.
        // The dashboard (Sources/FlagServer/Dashboard: HTML, CSS and JavaScript modules, no build step) ships as the
        // module's resources, beside the executable, so that every build serves it (the Docker image copies them).
        .target(
            name: "FlagServer",
            dependencies: ["FlagCore", "FlagAPI", "FlagHTTP", "FlagLock", "FlagSQLite", "FlagPostgres", "FlagSigning"],
            resources: [.copy("Dashboard")]),
        // `flagserver`: the command line and the composition root; everything else is in FlagServer. Not named
        // `flagserver` so that it cannot clash with `FlagServer` on a case-insensitive file system.
        .executableTarget(name: "FlagServerMain", dependencies: ["FlagServer", "FlagHTTP"]),
        // The library services and apps embed: keys, sessions, the SQLite cache, the refresh transport, overrides.
        // With trusted keys it verifies what it activates, through FlagSigning.
        // Its privacy manifest (Resources/PrivacyInfo.xcprivacy, docs/client.md) ships with it into every app.
        .target(
            name: "FlagClient", dependencies: ["FlagCore", "FlagLock", "FlagSQLite", "FlagSigning"],
            resources: [.copy("Resources/PrivacyInfo.xcprivacy")]),
        // A fixed in-memory `FeatureFlags` for tests and previews.
        .target(name: "FlagClientTesting", dependencies: ["FlagClient", "FlagCore"]),
        // The in-app debug menu: an Observation model of the client's flags, state and overrides, and its SwiftUI view
        // (Apple platforms only). A product of its own, so that release builds can leave it out.
        .target(name: "FlagDebugMenu", dependencies: ["FlagClient", "FlagCore"]),
        // flagctl: the parser, the commands and their output live in FlagCLI; the executable only wires it to
        // the process. The tests depend on the executables so that they are built, and run them.
        .target(name: "FlagCLI", dependencies: ["FlagCore", "FlagAPI", "FlagSigning"]),
        .executableTarget(name: "flagctl", dependencies: ["FlagCLI"]),
        // `swift package generate-flags`: `flagctl generate swift` from a flag-set file checked into the app's package
        // (docs/codegen.md). Command plugins are built only when run, so they cost `swift build` nothing. A command
        // plugin's permissions are fixed here, so reading from a server, which needs the network, is a second plugin.
        .plugin(
            name: "GenerateFlags",
            capability: .command(
                intent: .custom(
                    verb: "generate-flags",
                    description: "Generate typed Swift FlagKeys from a flag-set file (flagctl generate swift --file)"),
                permissions: [.writeToPackageDirectory(reason: "It writes the generated Swift file (--output).")]),
            dependencies: ["flagctl"]),
        .plugin(
            name: "GenerateFlagsFromServer",
            capability: .command(
                intent: .custom(
                    verb: "generate-flags-from-server",
                    description:
                        "Generate typed Swift FlagKeys from a set on a FlagServer (flagctl generate swift --set)"
                ),
                permissions: [
                    .writeToPackageDirectory(reason: "It writes the generated Swift file (--output)."),
                    .allowNetworkConnections(
                        scope: .all(), reason: "It reads the flag set from the FlagServer (--server, FLAGCTL_SERVER)."),
                ]),
            dependencies: ["flagctl"]),
        // Speed figures for BENCHMARKS.md.
        .executableTarget(name: "flagbench", dependencies: ["FlagCore", "FlagClient", "FlagSigning", "FlagSQLite"]),
        // servebench: the serving path in one process, for callgrind's instruction counts (BENCHMARKS.md).
        .executableTarget(name: "servebench", dependencies: ["FlagServer", "FlagHTTP", "FlagCore"]),
        // flagdemo: a service embedding FlagClient, for docs/client.md and the README.
        .executableTarget(name: "flagdemo", dependencies: ["FlagClient", "FlagCore"]),
        // flagshareprobe: the app and the app extension of the shared-cache tests, as two processes (tests only).
        .executableTarget(name: "flagshareprobe", dependencies: ["FlagClient"], path: "Tests/flagshareprobe"),
        // What every test target may share, without the server: temporary directories, polling with a timeout, raw
        // socket clients, HTTP parsing helpers, child processes, a tampering proxy and a PostgreSQL test database.
        // Regular targets so that test targets can depend on them; no product, nothing ships them.
        .target(
            name: "FlagTestBasics", dependencies: ["FlagHTTP", "FlagCore", "FlagPostgres", "FlagLock"],
            path: "Tests/FlagTestBasics"),
        // What the server's, the client's and flagctl's tests share on top: one request API over the app in process
        // or a live server, live servers (in process or the built binary), and a signing set server.
        .target(
            name: "FlagTestSupport",
            dependencies: [
                "FlagTestBasics", "FlagServer", "FlagHTTP", "FlagCore", "FlagPostgres", "FlagSigning", "FlagLock",
            ],
            path: "Tests/FlagTestSupport"
        ),
        .testTarget(
            name: "FlagCoreTests", dependencies: ["FlagCore"], resources: [.copy("Vectors"), .copy("JSONSuite")]),
        .testTarget(name: "FlagAPITests", dependencies: ["FlagAPI", "FlagCore"]),
        .testTarget(name: "FlagSQLiteTests", dependencies: ["FlagSQLite", "FlagTestBasics"]),
        .testTarget(name: "FlagLockTests", dependencies: ["FlagLock"]),
        .testTarget(name: "FlagSigningTests", dependencies: ["FlagSigning", "FlagCore"]),
        .testTarget(name: "FlagPostgresTests", dependencies: ["FlagPostgres", "FlagTestBasics"]),
        .testTarget(name: "FlagHTTPTests", dependencies: ["FlagHTTP", "FlagLock", "FlagTestBasics"]),
        .testTarget(
            name: "FlagServerTests",
            dependencies: [
                "FlagServer", "FlagAPI", "FlagHTTP", "FlagLock", "FlagSQLite", "FlagPostgres", "FlagCore",
                "FlagServerMain", "FlagSigning", "FlagTestSupport",
            ],
            resources: [.copy("Abuse")]),
        .testTarget(
            name: "FlagClientTests",
            dependencies: [
                "FlagClient", "FlagClientTesting", "FlagCore", "FlagLock", "FlagSQLite", "FlagServer", "FlagHTTP",
                "FlagSigning", "flagdemo", "flagshareprobe",
                "FlagTestSupport",
            ]),
        .testTarget(
            name: "FlagDebugMenuTests",
            dependencies: ["FlagDebugMenu", "FlagClient", "FlagCore", "FlagLock", "FlagTestSupport"]),
        .testTarget(name: "FlagDemoTests", dependencies: ["flagdemo", "FlagClientTesting", "FlagClient", "FlagCore"]),
        // FlagClient: the generator's tests compile a generated file (Generated/HostileFlags.swift) against it.
        .testTarget(
            name: "FlagCLITests",
            dependencies: [
                "FlagCLI", "FlagAPI", "flagctl", "FlagServerMain", "FlagSigning", "FlagTestSupport", "FlagTestBasics",
                "FlagHTTP", "FlagClient", "FlagCore",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
