import FlagHTTP
import Synchronization

/// The real HTTP engine on 127.0.0.1 and a port of its own, in the test's process, serving a handler, with an
/// application's timers beside it when one is given (FlagTestSupport gives a whole `FlagServerApp`). `stop()` ends
/// it as SIGTERM would.
public final class LiveHTTPServer: Sendable {
    /// The engine.
    public let server: HTTPServer
    /// The port it listens on.
    public let port: Int
    private let application: LiveApplication?
    private let stopped = Atomic(false)

    /// Two loops on port 0 unless `configure` says otherwise.
    public static func configuration(
        _ configure: (inout HTTPServerConfiguration) -> Void
    ) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, loopCount: 2)
        configure(&configuration)
        return configuration
    }

    /// Starts the engine with `handler`, and `application` beside it.
    public init(
        configuration: HTTPServerConfiguration, handler: @escaping HTTPHandler, application: LiveApplication? = nil
    ) throws {
        LiveTest.expectOwnThread("a live HTTP server")
        server = HTTPServer(configuration: configuration, handler: handler)
        port = try server.start()
        self.application = application
        application?.start(server)
    }

    /// Stops as on SIGTERM: streams end, in-flight requests get `deadline` to finish, the port is closed, the
    /// application's work is done. Only the first call acts.
    public func stop(deadline: Duration = .seconds(2)) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        application?.beforeShutdown()
        server.shutdown(deadline: deadline)
        application?.afterShutdown()
    }
}

/// Starts an engine with `handler` for one test (two loops on port 0 unless `configure` says otherwise) and
/// stops it afterwards.
public func withServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, handler: @escaping HTTPHandler,
    _ body: (HTTPServer, Int) throws -> Void
) throws {
    let live = try LiveHTTPServer(configuration: LiveHTTPServer.configuration(configure), handler: handler)
    defer { live.stop() }
    try body(live.server, live.port)
}

/// `withServer` for async tests.
public func withServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }, handler: @escaping HTTPHandler,
    _ body: (HTTPServer, Int) async throws -> Void
) async throws {
    let live = try LiveHTTPServer(configuration: LiveHTTPServer.configuration(configure), handler: handler)
    defer { live.stop() }
    try await body(live.server, live.port)
}

/// What runs beside a `LiveHTTPServer`'s engine: an application started with it and stopped around its shutdown.
public struct LiveApplication: Sendable {
    /// Called once the engine listens.
    public let start: @Sendable (HTTPServer) -> Void
    /// Called before the engine shuts down.
    public let beforeShutdown: @Sendable () -> Void
    /// Called after the engine has shut down.
    public let afterShutdown: @Sendable () -> Void

    /// An application with these three steps.
    public init(
        start: @escaping @Sendable (HTTPServer) -> Void, beforeShutdown: @escaping @Sendable () -> Void,
        afterShutdown: @escaping @Sendable () -> Void
    ) {
        self.start = start
        self.beforeShutdown = beforeShutdown
        self.afterShutdown = afterShutdown
    }
}
