import FlagTestBasics
import Glibc
import Testing

@testable import FlagHTTP

@Suite("HTTP server start-up", .live)
struct HTTPServerStartTests {
    @Test func refusesAPortAnotherServerListensOn() throws {
        try withServer(handler: basicHandler) { _, port in
            let second = HTTPServer(
                configuration: HTTPServerConfiguration(port: port, loopCount: 1), handler: basicHandler)
            let error = try #require(throws: HTTPServerError.self) { try second.start() }
            #expect(error.isAddressUnavailable)
            #expect(error.description.contains("127.0.0.1:\(port)"))
            // The first server is unaffected.
            let client = try TestClient(port: port)
            client.send("GET /still-here HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().text == "/still-here")
        }
    }

    @Test func rejectsAnInvalidAddressAndASecondStart() throws {
        let invalid = HTTPServer(
            configuration: HTTPServerConfiguration(host: "not-an-ip", port: 0), handler: basicHandler)
        #expect(throws: HTTPServerError.self) { try invalid.start() }
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopCount: 1), handler: basicHandler)
        let port = try server.start()
        #expect(server.port == port)
        #expect(throws: HTTPServerError.self) { try server.start() }
        server.shutdown(deadline: .seconds(1))
        #expect(server.port == nil)
        server.shutdown(deadline: .seconds(1))  // a second shutdown is a no-op
    }

    @Test func raisesTheOpenFileLimitToTheHardLimit() throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopCount: 1), handler: basicHandler)
        _ = try server.start()
        defer { server.shutdown(deadline: .seconds(1)) }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(limit.rlim_cur == limit.rlim_max)
    }

    @Test(arguments: ["127.0.0.1", "localhost", "0.0.0.0", "::1", "[::]"])
    func parsesListenAddresses(host: String) {
        #expect(Socket.Address(host: host, port: 8080) != nil)
    }

    @Test(arguments: [("example.com", 80), ("127.0.0.1", 70_000), ("1.2.3", 80)])
    func rejectsBadListenAddresses(host: String, port: Int) {
        #expect(Socket.Address(host: host, port: port) == nil)
    }
}
