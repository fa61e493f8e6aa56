import FlagLock
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// Where flagserver takes the key-encryption key that seals the sets' signing keys (docs/signing.md): the
/// environment, a configured file, or (SQLite only) a file it makes on first start; and what it says when a key is
/// missing or unreadable.
@Suite("The key-encryption key's configuration")
struct KeyEncryptionKeyConfigurationTests {
    private func configuration(_ directory: URL, postgres: String? = nil, file: String? = nil) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory.path
        configuration.postgres = postgres
        configuration.signingKeyFile = file
        return configuration
    }

    @Test func theEmbeddedDefaultMakesAnOwnerOnlyKeyFileOnceAndReadsItAfter() throws {
        try withTemporaryDirectory { directory in
            let logs = Locked<[String]>([])
            let log: @Sendable (String) -> Void = { line in logs.withLock { $0.append(line) } }
            let made = try #require(
                try ServerBootstrap.keyEncryptionKey(configuration(directory), environment: [:], log: log))
            let path = directory.appendingPathComponent("signing-key").path
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == made.base64 + "\n")
            #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
            #expect(logs.withLock { $0 }.contains { $0.contains("made the key-encryption key") })
            let again = try #require(
                try ServerBootstrap.keyEncryptionKey(configuration(directory), environment: [:], log: log))
            #expect(again.bytes == made.bytes)
        }
    }

    @Test func theEnvironmentBeatsAnyFileAndABadKeyIsRefusedWithoutQuotingIt() throws {
        try withTemporaryDirectory { directory in
            let key = try KeyEncryptionKey.generate()
            let fromEnvironment = try ServerBootstrap.keyEncryptionKey(
                configuration(directory, file: "/nonexistent"), environment: ["FLAGSERVER_SIGNING_KEY": key.base64],
                log: { _ in })
            #expect(fromEnvironment?.bytes == key.bytes)
            let secret = "not-a-key-but-maybe-a-secret"
            let refused = try #require(throws: ConfigurationError.self) {
                try ServerBootstrap.keyEncryptionKey(
                    configuration(directory), environment: ["FLAGSERVER_SIGNING_KEY": secret], log: { _ in })
            }
            #expect(refused.message.hasPrefix("FLAGSERVER_SIGNING_KEY: "))
            #expect(!refused.message.contains(secret))
        }
    }

    @Test func aConfiguredFileMustExistAndHoldOneKey() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("kek").path
            let absent = try #require(throws: ConfigurationError.self) {
                try ServerBootstrap.keyEncryptionKey(
                    configuration(directory, file: missing), environment: [:], log: { _ in })
            }
            #expect(absent.message.contains("does not exist") && absent.message.contains("openssl rand -base64 32"))

            try Data("AAAA\n".utf8).write(to: URL(fileURLWithPath: missing))
            chmod(missing, 0o600)
            let short = try #require(throws: ConfigurationError.self) {
                try ServerBootstrap.keyEncryptionKey(
                    configuration(directory, file: missing), environment: [:], log: { _ in })
            }
            #expect(short.message.hasPrefix("\(missing): ") && short.message.contains("32 bytes"))

            // A file others may read is made owner-only, and said so.
            let key = try KeyEncryptionKey.generate()
            try Data((key.base64 + "\n").utf8).write(to: URL(fileURLWithPath: missing))
            chmod(missing, 0o644)
            let logs = Locked<[String]>([])
            let read = try ServerBootstrap.keyEncryptionKey(
                configuration(directory, file: missing), environment: [:],
                log: { line in logs.withLock { $0.append(line) } })
            #expect(read?.bytes == key.bytes)
            #expect(try FileManager.default.attributesOfItem(atPath: missing)[.posixPermissions] as? Int == 0o600)
            #expect(logs.withLock { $0 }.contains { $0.contains("was readable by others") })
        }
    }

    @Test func postgresWithoutAKeySignsNothingAndSaysHowToSign() throws {
        try withTemporaryDirectory { directory in
            let logs = Locked<[String]>([])
            let key = try ServerBootstrap.keyEncryptionKey(
                configuration(directory, postgres: "postgresql://db/flags"), environment: [:],
                log: { line in logs.withLock { $0.append(line) } })
            #expect(key == nil)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("signing-key").path))
            #expect(
                logs.withLock { $0 }.contains {
                    $0.contains("new sets are not signed") && $0.contains("FLAGSERVER_SIGNING_KEY")
                })
        }
    }
}
