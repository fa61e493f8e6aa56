import Glibc

/// Size limits the request parser enforces; every one is answered with a JSON error and the connection closed.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Request line plus header fields plus the terminating empty line, in bytes; more → 431.
    public var maxHeaderBytes: Int
    /// Header fields per request (and trailer fields per chunked body); more → 431.
    public var maxHeaderCount: Int
    /// The request line alone, without its CRLF, in bytes; longer → 414. Capped by `maxHeaderBytes`.
    public var maxRequestLineBytes: Int
    /// The body after de-chunking, in bytes; more → 413.
    public var maxBodyBytes: Int
    /// One chunk-size line of a chunked body including extensions, in bytes; longer → 400.
    public var maxChunkLineBytes: Int

    /// The spec's defaults: 16 KiB of head, 100 fields, an 8 KiB request line, a 1 MiB body, 4 KiB chunk lines.
    public init(
        maxHeaderBytes: Int = 16 * 1024,
        maxHeaderCount: Int = 100,
        maxRequestLineBytes: Int = 8 * 1024,
        maxBodyBytes: Int = 1024 * 1024,
        maxChunkLineBytes: Int = 4 * 1024
    ) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxChunkLineBytes = maxChunkLineBytes
    }
}

/// Everything `HTTPServer` needs to know: where to listen, how many loops, limits and timeouts.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal, or `localhost` (127.0.0.1).
    public var host: String
    /// The TCP port; 0 binds an ephemeral port, which `HTTPServer.start()` returns.
    public var port: Int
    /// Event-loop threads, each with its own `SO_REUSEPORT` listening socket; defaults to the number of cores.
    public var loopCount: Int
    /// Parser limits (header size and count, request line, body).
    public var limits: HTTPParserLimits
    /// How long a client may take to send a complete request head, from its first byte (or from accept).
    public var headerReadTimeout: Duration
    /// How long a keep-alive connection may stay idle between requests (also the stall limit for bodies and writes).
    public var idleTimeout: Duration
    /// Open connections across all loops; a connection beyond it is answered 503 and closed.
    public var maxConnections: Int
    /// Open connections per client address (`HTTPRequest.clientAddress`); one beyond it is answered 503 and closed.
    /// 0 turns the cap off. The default is generous: a mobile carrier puts many phones behind one address.
    ///
    /// A connection from a peer that is not a trusted proxy counts for the peer from accept to close. A trusted
    /// proxy's connection counts for no one until its first request, then for the client of its latest request
    /// (moved when a request names another client); a request that would take its client over the cap is answered
    /// 503 and the connection closed.
    public var maxConnectionsPerAddress = 512
    /// Networks of the proxies in front of the server (load balancers, nginx) whose `X-Forwarded-For` names the
    /// client: the client address of a request for logs, rate limits and `maxConnectionsPerAddress`. Empty (the
    /// default) trusts no one, and the header is never read.
    ///
    /// The client address of a request is:
    /// - the peer's address, when the peer is in none of these networks; its `X-Forwarded-For` is ignored;
    /// - when the peer is trusted: every `X-Forwarded-For` field, in order, read as one comma-separated list, is
    ///   walked from the right, skipping the entries in these networks; the first entry that is not is the client.
    ///   Each proxy appends the address it received the request from, so only the right-most entries were written
    ///   by proxies you trust; whatever is to their left may have been sent by the client. If every entry is
    ///   trusted, the left-most is the client; without the header (or with only empty elements), the peer is;
    /// - an entry may carry a port (`192.0.2.1:5000`, `[2001:db8::1]:5000`), which is dropped. An entry that is not
    ///   an IP address (`unknown`, a name, an obfuscated identifier) ends the walk: the client is then the trusted
    ///   proxy that wrote it, the entry to its right (or the peer). So the answer is always an address that this
    ///   server or a trusted proxy saw as a TCP peer, never a text of the client's choosing.
    public var trustedProxies: [CIDR] = []
    /// Response bytes a connection may have waiting for a slow reader before it is closed.
    public var maxPendingOutputBytes: Int
    /// Requests a connection may have outstanding (read but not yet answered) before the engine stops reading it.
    public var maxPipelinedRequests: Int
    /// How long a rejected connection keeps draining the client's input before closing, so the error arrives.
    public var lingerTimeout: Duration
    /// The `listen(2)` backlog per listening socket.
    public var backlog: Int
    /// The slowest average rate a request body may arrive at, in bytes per second, after a grace period of
    /// `headerReadTimeout` from the request's first byte; a slower body closes the connection. Without it a client
    /// sending one body byte per `idleTimeout` holds a connection open indefinitely (slowloris on the body).
    public var minBodyBytesPerSecond = 1024
    /// What the engine answers for a request it refuses before a route is known (malformed, over a limit) and for a
    /// connection over `maxConnections` or `maxConnectionsPerAddress`. The default is the rejection's own generic
    /// JSON error; an application gives its own to answer in the shape of the route the request was for, or to name
    /// its setting behind a limit.
    public var renderRejection: HTTPRejectionRenderer = { $0.response }

    /// A configuration with the spec's defaults (10 s header timeout, 60 s idle, 10,000 connections, 8 MiB output).
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        loopCount: Int = HTTPServerConfiguration.coreCount,
        limits: HTTPParserLimits = HTTPParserLimits(),
        headerReadTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        maxConnections: Int = 10_000,
        maxPendingOutputBytes: Int = 8 * 1024 * 1024,
        maxPipelinedRequests: Int = 64,
        lingerTimeout: Duration = .seconds(2),
        backlog: Int = 1024
    ) {
        self.host = host
        self.port = port
        self.loopCount = loopCount
        self.limits = limits
        self.headerReadTimeout = headerReadTimeout
        self.idleTimeout = idleTimeout
        self.maxConnections = maxConnections
        self.maxPendingOutputBytes = maxPendingOutputBytes
        self.maxPipelinedRequests = maxPipelinedRequests
        self.lingerTimeout = lingerTimeout
        self.backlog = backlog
    }

    /// The number of online cores (at least 1).
    public static var coreCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating instead of trapping on overflow.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflow2 ? .max : sum
    }
}
