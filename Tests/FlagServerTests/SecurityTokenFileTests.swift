import FlagCore
import FlagTestSupport
import Foundation
import Synchronization
import Testing

@testable import FlagServer

#if canImport(Glibc)
    import Glibc
#endif

/// The first-start admin token file stays owner-only: the server repairs a file others may read and refuses what
/// it cannot repair safely.
@Suite("Security: the admin token file is owner-only")
struct SecurityTokenFileTests {
    /// A configuration on `directory/data` with no seeds, and a log that keeps its lines.
    final class Start: Sendable {
        let configuration: ServerConfiguration
        let lines = Mutex<[String]>([])

        init(_ directory: URL) {
            configuration = .test(in: directory)
        }

        func boot() throws -> ServerBootstrap {
            try ServerBootstrap(
                configuration: configuration, environment: [:], clock: TestClock().clock,
                log: { [self] line in lines.withLock { $0.append(line) } })
        }

        var log: [String] { lines.withLock { $0 } }
    }

    static func mode(_ path: String) throws -> Int {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw TestClientError(description: "lstat \(path): errno \(errno)") }
        return Int(status.st_mode & 0o7777)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o666, 0o660, 0o606])
    func aFileOthersMayReadIsMadeOwnerOnlyAndSaidSo(_ loose: Int) throws {
        try withTemporaryDirectory { directory in
            let start = Start(directory)
            let first = try start.boot()
            let file = try #require(first.adminTokenFile)
            #expect(try Self.mode(file) == 0o600)
            let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines)
            #expect(chmod(file, mode_t(loose)) == 0)

            let second = try start.boot()
            #expect(second.adminTokenFile == nil, "the token in the store still works: no new one")
            #expect(try Self.mode(file) == 0o600)
            #expect(try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .newlines) == token)
            let octal = String(loose, radix: 8)
            let said = start.log.filter { $0.contains("was readable by others (mode \(octal))") }
            #expect(said.count == 1)
            #expect(!start.log.joined().contains(String(token.dropFirst(4).prefix(8))))
            #expect(try second.app.tokens.authenticate("Bearer \(token)").name == "admin")
        }
    }

    @Test func anOwnerOnlyFileIsLeftAlone() throws {
        try withTemporaryDirectory { directory in
            let start = Start(directory)
            let file = try #require(try start.boot().adminTokenFile)
            #expect(chmod(file, 0o400) == 0)
            _ = try start.boot()
            #expect(try Self.mode(file) == 0o400)
            #expect(start.log.allSatisfy { !$0.contains("readable by others") })
        }
    }

    @Test func aSymbolicLinkIsRefusedAndItsTargetUntouched() throws {
        try withTemporaryDirectory { directory in
            let start = Start(directory)
            let file = try #require(try start.boot().adminTokenFile)
            let elsewhere = directory.appendingPathComponent("elsewhere").path
            #expect(rename(file, elsewhere) == 0)
            #expect(chmod(elsewhere, 0o644) == 0)
            #expect(symlink(elsewhere, file) == 0)
            let error = #expect(throws: ConfigurationError.self) { try start.boot() }
            #expect(
                error?.message == "\(file) is a symbolic link; the admin token file must be a plain file: remove it")
            #expect(try Self.mode(elsewhere) == 0o644)
        }
    }

    @Test func aDirectoryInItsPlaceIsRefused() throws {
        try withTemporaryDirectory { directory in
            let start = Start(directory)
            let file = start.configuration.adminTokenFile
            try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: true)
            let error = #expect(throws: ConfigurationError.self) { try start.boot() }
            #expect(error?.message == "\(file) is not a plain file; the admin token file must be one: remove it")
        }
    }

    /// The check itself, without a server: what it reports for each state of the file.
    @Test func theCheckReportsWhatItFound() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("admin-token")
            #expect(try TokenAuthority.secureTokenFile(file) == .absent)
            try TokenAuthority.writeSecret("fsa_x\n", to: file)
            #expect(try Self.mode(file.path) == 0o600)
            #expect(try TokenAuthority.secureTokenFile(file) == .ownerOnly)
            #expect(chmod(file.path, 0o664) == 0)
            #expect(try TokenAuthority.secureTokenFile(file) == .repaired(previousMode: 0o664))
            #expect(try Self.mode(file.path) == 0o600)
        }
    }

    /// `writeSecret` creates the file 0600 whatever the process umask lets through, and never writes through a
    /// link planted where the file goes.
    @Test func writingTheSecretReplacesALinkInsteadOfFollowingIt() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("admin-token")
            let target = directory.appendingPathComponent("target").path
            #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
            #expect(symlink(target, file.path) == 0)
            try TokenAuthority.writeSecret("fsa_y\n", to: file)
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
            #expect(try Self.mode(file.path) == 0o600)
            #expect(try String(contentsOf: file, encoding: .utf8) == "fsa_y\n")
        }
    }
}
