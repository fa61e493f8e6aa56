// docs/deploy.md's "Inside your own process", type-checked by Tests/embedding/check against the built modules
// without the package's name: it compiles only with what FlagServer declares `public`.
import FlagHTTP
import FlagServer
import Foundation

func runEmbeddedServer() throws {
    var configuration = ServerConfiguration()  // or ServerConfiguration.load(path: "flagserver.json")
    configuration.port = 0  // any free port
    configuration.dataDirectory = "/var/lib/my-flags"
    let bootstrap = try ServerBootstrap(
        configuration: configuration, environment: ProcessInfo.processInfo.environment, clock: .system,
        log: { print("flagserver: \($0)") })
    let server = HTTPServer(configuration: configuration.http, handler: bootstrap.app.handler)
    let port = try server.start()
    print("listening on \(port)")
    bootstrap.app.start(server: server)
    // … and to stop: the streams first, then the connections, then the store's queue.
    bootstrap.app.shutdown()
    server.shutdown(deadline: .seconds(configuration.shutdownGraceSeconds))
    bootstrap.app.finishStoreWork()
}
