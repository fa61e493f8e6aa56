import Dispatch
import FlagHTTP
import FlagServer
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `flagserver`: parses the command line, composes the server from its configuration, and runs it until SIGTERM
/// or SIGINT.

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("flagserver: \(message)\n".utf8))
    exit(code)
}

let options: CommandLineOptions
do {
    options = try CommandLineOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error)\n\n\(CommandLineOptions.usage)", code: 2)
}
if options.help {
    print(CommandLineOptions.usage)
    exit(0)
}

let log: @Sendable (String) -> Void = { line in
    FileHandle.standardError.write(Data("flagserver: \(line)\n".utf8))
}

let configuration: ServerConfiguration
let bootstrap: ServerBootstrap
do {
    configuration = try options.configuration(
        fileExists: { FileManager.default.fileExists(atPath: $0) }, environment: ProcessInfo.processInfo.environment)
    bootstrap = try ServerBootstrap(
        configuration: configuration, environment: ProcessInfo.processInfo.environment, clock: .system, log: log)
} catch {
    fail("\(error)", code: 1)
}

let server = HTTPServer(configuration: configuration.http, handler: bootstrap.app.handler)

// Signals are handled on the main queue, which `dispatchMain()` runs (top-level code is main-actor isolated). They
// are set up before the server says it listens, so that a SIGTERM right after that line is never lost.
var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT] {
    signal(signalNumber, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        log("shutting down: finishing requests, closing streams")
        bootstrap.app.shutdown()
        server.shutdown(deadline: .seconds(configuration.shutdownGraceSeconds))
        bootstrap.app.finishStoreWork()
        log("stopped")
        exit(0)
    }
    source.resume()
    signalSources.append(source)
}

let port: Int
do {
    port = try server.start()
} catch {
    fail("cannot listen on \(configuration.host):\(configuration.port): \(error)", code: 1)
}
bootstrap.app.start(server: server)

for name in bootstrap.seeded { log("imported seed flag set \(name)") }
log("data in \(configuration.dataDirectory) (\(bootstrap.storeDescription))")
if let tokenFile = bootstrap.adminTokenFile {
    log("created the first admin token; it is in \(tokenFile) (readable only by you)")
} else if bootstrap.foundAdminToken {
    log("an admin token exists in the database already (the server that made it wrote it to its data directory)")
}
let base = "http://\(configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host):\(port)"
log("listening on \(base)")
if !configuration.trustedProxies.isEmpty {
    let networks = configuration.trustedProxies.map(\.description).joined(separator: ", ")
    log("client addresses from the X-Forwarded-For of peers in \(networks)")
}
if bootstrap.app.servesDashboard {
    log("dashboard: \(base)/ui/ (sign in with a token; put TLS in front of flagserver beyond this machine)")
}
dispatchMain()
