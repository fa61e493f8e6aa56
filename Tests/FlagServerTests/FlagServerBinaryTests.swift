import FlagPostgres
import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("flagserver binary", .enabled(if: ServerProcess.binary != nil), .serialized, .live)
struct FlagServerBinaryTests {
    @Test func aBadArgumentExitsTwoWithTheUsage() throws {
        let directory = try TemporaryDirectory()
        let errors = directory.url.appendingPathComponent("stderr")
        let binary = try #require(ServerProcess.binary)
        let pid = try Spawn.start(
            binary.path, ["--port", "80"], environment: [:], directory: directory.url.path, stdout: "/dev/null",
            stderr: errors.path)
        let ended = Spawn.wait(pid)
        let text = try String(contentsOf: errors, encoding: .utf8)
        #expect(ended.status == 2)
        #expect(text.hasPrefix("flagserver: unknown argument \"--port\""))
        #expect(text.contains("usage: flagserver [--config FILE] [--listen HOST:PORT] [--data DIR]"))
    }

    /// A connection string libpq cannot parse stops the start without quoting it (it may hold a password); a
    /// flagserver built without the `Postgres` trait says how to get one with it.
    @Test func aBadPostgresStringStopsTheStartWithoutQuotingIt() throws {
        let directory = try TemporaryDirectory()
        let errors = directory.url.appendingPathComponent("stderr")
        let binary = try #require(ServerProcess.binary)
        let pid = try Spawn.start(
            binary.path, ["--data", directory.url.path, "--postgres", "host=db password s3cret-pw"], environment: [:],
            directory: directory.url.path, stdout: "/dev/null", stderr: errors.path)
        let ended = Spawn.wait(pid)
        let text = try String(contentsOf: errors, encoding: .utf8)
        #expect(ended.status == 1)
        #expect(!text.contains("s3cret-pw"))
        if PostgresConnection.isAvailable {
            #expect(text.contains("the PostgreSQL connection string (--postgres, FLAGSERVER_POSTGRES or \"postgres\")"))
        } else {
            #expect(text.contains("this flagserver was built without PostgreSQL: build it with"))
        }
    }

    @Test func itStartsSaysWhereAndStopsOnSIGTERM() throws {
        try withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data").path
            let server = try ServerProcess(
                arguments: ["--data", data], directory: BuiltProducts.repositoryRoot,
                log: directory.appendingPathComponent("log"))
            let log = server.output
            #expect(log.contains("created the first admin token; it is in \(data)/admin-token (readable only by you)"))
            let token = try String(contentsOfFile: "\(data)/admin-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!log.contains(token))

            let response = try LiveClient(port: server.port).send("GET", "/v1/admin/sets", token: token)
            #expect(response.status == 200)
            #expect(response.text.contains("\"name\":\"ios-prod\""))

            let ended = try #require(server.stop(signal: SIGTERM))
            #expect(ended.status == 0)
            #expect(server.output.hasSuffix("flagserver: stopped\n"))
        }
    }
}
