import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// What a start refuses or warns about.
@Suite("checks at start")
struct StartChecksTests {
    @Test func anEnvironmentAdminTokenShorterThan32CharactersStopsTheStart() throws {
        try withTemporaryDirectory { directory in
            let short = String(repeating: "k", count: 31)
            let refused = try #require(throws: ConfigurationError.self) {
                try ServerBootstrap.quiet(.test(in: directory), adminToken: short)
            }
            #expect(refused.message.contains("FLAGSERVER_ADMIN_TOKEN has 31 characters"))
            #expect(refused.message.contains("openssl rand -hex 32"))
            #expect(!refused.message.contains(short))
            let enough = String(repeating: "k", count: 32)
            let started = try ServerBootstrap.quiet(.test(in: directory), adminToken: enough)
            #expect(try started.app.tokens.authenticate("Bearer \(enough)").name == "env")
        }
    }

    private static let besideTheDatabase =
        "a backup of this folder holds both the sealed keys and the key that opens them"

    /// The lines logged while reading the key-encryption key of `configuration` with `environment`.
    private func logs(_ configuration: ServerConfiguration, _ environment: [String: String] = [:]) throws -> [String] {
        let lines = Locked<[String]>([])
        _ = try ServerBootstrap.keyEncryptionKey(
            configuration, environment: environment, log: { line in lines.withLock { $0.append(line) } })
        return lines.withLock { $0 }
    }

    @Test func aKeyEncryptionKeyInTheDataDirectoryIsWarnedAboutOnce() throws {
        try withTemporaryDirectory { directory in
            let embedded = ServerConfiguration.test(in: directory)
            try FileManager.default.createDirectory(
                atPath: embedded.dataDirectory, withIntermediateDirectories: true)
            // The default: DATA/signing-key, beside DATA/flagserver.sqlite.
            let first = try logs(embedded)
            #expect(first.filter { $0.contains(Self.besideTheDatabase) }.count == 1)
            #expect(first.contains { $0.contains("--signing-key-file") })
            #expect(try logs(embedded).filter { $0.contains(Self.besideTheDatabase) }.count == 1)
            // A file configured inside it too.
            var inside = embedded
            inside.signingKeyFile = embedded.dataDirectory + "/../data/kek"
            try (try KeyEncryptionKey.generate().base64 + "\n").write(
                toFile: embedded.dataDirectory + "/kek", atomically: true, encoding: .utf8)
            #expect(try logs(inside).contains { $0.contains(Self.besideTheDatabase) })
            // Outside it, or from the environment: nothing.
            var outside = embedded
            outside.signingKeyFile = directory.appendingPathComponent("kek").path
            try (try KeyEncryptionKey.generate().base64 + "\n").write(
                toFile: outside.signingKeyFile ?? "", atomically: true, encoding: .utf8)
            #expect(!(try logs(outside)).contains { $0.contains(Self.besideTheDatabase) })
            let environment = ["FLAGSERVER_SIGNING_KEY": try KeyEncryptionKey.generate().base64]
            #expect(!(try logs(embedded, environment)).contains { $0.contains(Self.besideTheDatabase) })
        }
    }
}
