import FlagCore
import FlagHTTP
import Foundation

/// The composition of a running server from its configuration: the store (SQLite in the data directory, or a
/// shared PostgreSQL database), the seed sets, the tokens (creating the first admin token), the sync with other
/// servers sharing the store, and the application.
public struct ServerBootstrap: Sendable {
    /// The application, ready to be given to `HTTPServer`.
    public let app: FlagServerApp
    /// The file the first admin token was written to, when this start created one.
    public let adminTokenFile: String?
    /// The sets imported from the seed directory on this start.
    public let seeded: [String]
    /// Where the state is kept, for the start-up log: the SQLite file or the database's URI without password.
    public let storeDescription: String
    /// Whether an admin token existed already in a store shared with other servers (no token file was written).
    public let foundAdminToken: Bool

    /// Opens (or creates) the data directory and the store, and everything in it.
    ///
    /// With PostgreSQL, a database that cannot be reached yet is waited for (saying so once a second); one that
    /// refuses the connection (credentials, no such database) stops the start. The seeding and the first admin
    /// token happen under the store's lock, so that of several servers starting together exactly one makes them.
    ///
    /// - Parameters:
    ///   - environment: the process environment, for the admin token and key-encryption key variables.
    ///   - log: where one-line operational messages go; never given a token or a password.
    public init(
        configuration: ServerConfiguration, environment: [String: String], clock: ServerClock,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        let data = configuration.dataDirectory
        do {
            try FileManager.default.createDirectory(
                atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ConfigurationError("cannot create the data directory \(data): \(error.localizedDescription)")
        }
        let store: any FlagStore
        if let postgres = configuration.postgres {
            (store, storeDescription) = try Self.openPostgres(postgres, log: log)
        } else {
            store = try SQLiteFlagStore(path: configuration.databasePath)
            storeDescription = configuration.databasePath
        }
        let environmentToken = environment[configuration.adminTokenEnvironment].flatMap { $0.isEmpty ? nil : $0 }
        if let environmentToken, environmentToken.count < Self.minimumEnvironmentTokenLength {
            throw ConfigurationError(
                "\(configuration.adminTokenEnvironment) has \(environmentToken.count) characters; an admin token needs "
                    + "at least \(Self.minimumEnvironmentTokenLength) random ones so that it cannot be guessed. Make "
                    + "one with `openssl rand -hex 32`, or leave the variable unset and use the token the first start "
                    + "writes to \(configuration.adminTokenFile)")
        }
        let tokenFile = URL(fileURLWithPath: configuration.adminTokenFile)
        let keyEncryptionKey = try Self.keyEncryptionKey(configuration, environment: environment, log: log)
        let (service, tokens, seeded, written) = try store.exclusively {
            let service = try FlagService(
                store: store, clock: clock, keyEncryptionKey: keyEncryptionKey,
                telemetryLimits: configuration.telemetry, log: log)
            var seeded: [String] = []
            if service.states().isEmpty, let seeds = configuration.seedDirectory {
                seeded = try Self.seed(service, from: seeds)
            }
            let tokens = try TokenAuthority(tokens: store.tokens, clock: clock, environmentToken: environmentToken)
            if case .repaired(let mode) = try TokenAuthority.secureTokenFile(tokenFile) {
                log(
                    "\(tokenFile.path) was readable by others (mode \(String(mode, radix: 8))); it is owner-only (600) "
                        + "now, but whoever could read it may hold the admin token")
            }
            let written = try tokens.bootstrapAdminToken(file: tokenFile, environmentTokenSet: environmentToken != nil)
            return (service, tokens, seeded, written)
        }
        var sync: ReplicaSync?
        if let postgres = configuration.postgres {
            sync = try Self.listen(postgres, service: service, tokens: tokens, log: log)
        }
        self.app = FlagServerApp(
            service: service, tokens: tokens, clock: clock, settings: configuration.app, replicas: sync)
        self.adminTokenFile = written?.path
        self.seeded = seeded
        self.foundAdminToken = configuration.postgres != nil && written == nil && environmentToken == nil
    }

    /// The fewest characters `FLAGSERVER_ADMIN_TOKEN` may have: it never expires and acts as an unlimited admin,
    /// so it must be as hard to guess as the 256-bit tokens the server makes.
    package static let minimumEnvironmentTokenLength = 32

    /// Imports every `*.json` document of `directory` (a missing directory imports nothing), in name order, in one
    /// transaction: a crash during the import leaves an empty store, which the next start seeds again. A set is
    /// named by its `set` field or else by its file name.
    static func seed(_ service: FlagService, from directory: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return []
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw ConfigurationError("cannot list the seed directory \(directory): \(error.localizedDescription)")
        }
        var seeds: [(name: String, document: FlagSet, note: ChangeNote)] = []
        for file in names.filter({ $0.hasSuffix(".json") }).sorted() {
            let path = (directory as NSString).appendingPathComponent(file)
            var document: FlagSet
            do {
                document = try FlagSet.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            } catch {
                throw ConfigurationError("seed \(path) cannot be read: \(error)")
            }
            if document.name.isEmpty { document.name = String(file.dropLast(5)) }
            let name = document.name
            let problems = document.readProblems + CompiledFlagSet(document).problems
            guard problems.isEmpty else {
                let list = problems.map(\.description).joined(separator: "\n  ")
                throw ConfigurationError("seed \(path) is invalid:\n  \(list)")
            }
            let note = ChangeNote(actor: "flagserver", action: "set.seed", subject: name, reason: "seed \(file)")
            seeds.append((name, document, note))
        }
        do {
            try service.createSets(seeds)
        } catch let error as ServiceError {
            throw ConfigurationError("seeds in \(directory): \(error)")
        }
        return seeds.map(\.name)
    }
}
