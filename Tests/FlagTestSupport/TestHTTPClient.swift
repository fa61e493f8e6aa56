import FlagHTTP
import FlagServer

/// One way to send a request to the server under test and read the answer, with two back ends, as Hummingbird's
/// `.router` and `.live` test modes: `InProcessClient` hands the request to the handler in this process without
/// sockets; `LiveClient` writes it to a live server over a real socket. A test written against it runs on either.
///
/// ```swift
/// let response = try client.send("GET", "/v1/sets/ios-prod", token: sdkKey)
/// #expect(response.status == 200 && response.header("ETag") == "\"1\"")
/// ```
public protocol TestHTTPClient {
    /// Sends a request and returns the complete answer; `headers` go out in order, after `Authorization`.
    func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws
        -> TestResponse
}

extension TestHTTPClient {
    /// Sends a request, with `Authorization: Bearer token` when there is a token.
    public func send(
        _ method: String, _ target: String, token: String? = nil, headers: [(String, String)] = [],
        body: String = ""
    ) throws -> TestResponse {
        let authorization = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        return try execute(method, target, headers: authorization + headers, body: Array(body.utf8))
    }
}

/// The in-process back end: each request goes straight to `handler`, as if it had come on one connection.
public struct InProcessClient: TestHTTPClient {
    /// The handler under test, as the engine would be given it.
    public let handler: HTTPHandler
    /// The connection every request claims to arrive on (what a handler remembers per connection), if any.
    public let connection: HTTPConnectionContext?
    /// How long `execute` waits for an answer: handlers may answer from another thread (the store queue).
    public let timeout: Duration

    /// A client of `handler`; with `connection`, its requests share that connection's context.
    public init(
        handler: @escaping HTTPHandler, connection: HTTPConnectionContext? = nil, timeout: Duration = .patience
    ) {
        self.handler = handler
        self.connection = connection
        self.timeout = timeout
    }

    /// Sends a request and waits for the answer; throws if there is none within `timeout`.
    public func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws
        -> TestResponse
    {
        let recorder = start(method, target, headers: headers, body: body)
        guard waitUntil(timeout: timeout, every: .microseconds(100), { recorder.response != nil }),
            let response = recorder.response
        else {
            throw TimedOut("\(method) \(target) was not answered within \(timeout)")
        }
        return TestResponse(response)
    }

    /// Sends a request and returns at once with the recorder of its answer: for streams and long-polls, which a
    /// test drives further.
    public func start(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [])
        -> HTTPResponseRecorder
    {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: name, value: value) }
        let recorder = HTTPResponseRecorder()
        handler(
            HTTPRequest(method: method, target: target, headers: fields, body: body, connection: connection),
            recorder.responder)
        return recorder
    }
}

/// The live back end: requests written on one keep-alive connection to a server on 127.0.0.1.
public final class LiveClient: TestHTTPClient {
    /// The connection, for tests that go on with raw bytes.
    public let connection: TestClient

    /// Opens a connection to 127.0.0.1:`port`.
    public init(port: Int) throws {
        connection = try TestClient(port: port)
    }

    /// Writes the request with `Host` and, for a body, `Content-Length`, and reads the response.
    public func execute(_ method: String, _ target: String, headers: [(String, String)], body: [UInt8]) throws
        -> TestResponse
    {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: t\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        connection.send(Array((head + "\r\n").utf8) + body)
        return try connection.readResponse(headRequest: method == "HEAD")
    }
}

extension TestResponse {
    /// A handler's response as a test reads it: status, fields in order, body.
    public init(_ response: HTTPResponse) {
        self.init(
            status: response.status, headers: response.headers.map { (name: $0.name, value: $0.value) },
            body: response.body)
    }
}
