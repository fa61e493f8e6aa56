import FlagSigning
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The key-encryption key that seals the sets' signing keys (docs/signing.md): kept outside the database, so that a
/// copy or a backup of the database holds no usable signing key.
extension ServerBootstrap {
    /// The environment variable holding the key-encryption key itself, as base64; it beats any file.
    package static let signingKeyEnvironment = "FLAGSERVER_SIGNING_KEY"

    /// The server's key-encryption key: `FLAGSERVER_SIGNING_KEY`, else the configured file, else (SQLite only) the
    /// data directory's `signing-key`, made on first start. With PostgreSQL and neither, `nil`: every server sharing
    /// the database needs the same key, so none is made up, and new sets are not signed (the log says so).
    static func keyEncryptionKey(
        _ configuration: ServerConfiguration, environment: [String: String], log: @Sendable (String) -> Void
    ) throws -> KeyEncryptionKey? {
        if let text = environment[signingKeyEnvironment], !text.isEmpty {
            return try parse(text, source: signingKeyEnvironment)
        }
        if let path = configuration.signingKeyFile {
            guard FileManager.default.fileExists(atPath: path) else {
                throw ConfigurationError(
                    "the signing key file \(path) does not exist; create one with"
                        + " `(umask 077; openssl rand -base64 32 > \(path))`, or leave signingKeyFile out")
            }
            warnIfBesideTheDatabase(path, configuration, log: log)
            return try read(path, log: log)
        }
        guard configuration.postgres == nil else {
            log(
                "new sets are not signed: no key-encryption key; give every server sharing the database the same"
                    + " --signing-key-file or \(signingKeyEnvironment) (docs/signing.md)")
            return nil
        }
        let path = configuration.defaultSigningKeyFile
        warnIfBesideTheDatabase(path, configuration, log: log)
        if FileManager.default.fileExists(atPath: path) { return try read(path, log: log) }
        let key: KeyEncryptionKey
        do {
            key = try KeyEncryptionKey.generate()
        } catch {
            throw ConfigurationError("cannot make a key-encryption key: \(error)")
        }
        // Written beside and renamed into place, so that a crash leaves either no file (the next start makes one;
        // nothing was sealed with this key yet) or the whole key, never an empty file that stops every start.
        let partial = path + ".partial"
        try TokenAuthority.writeSecret(key.base64 + "\n", to: URL(fileURLWithPath: partial))
        guard rename(partial, path) == 0 else {
            throw ConfigurationError("cannot move \(partial) to \(path): \(String(cString: strerror(errno)))")
        }
        // The rename itself must survive a power loss before any set is sealed with this key.
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            defer { close(directory) }
            guard fsync(directory) == 0 else {
                throw ConfigurationError("cannot sync the directory of \(path): \(String(cString: strerror(errno)))")
            }
        }
        log("made the key-encryption key \(path) (mode 600); back it up apart from the database")
        return key
    }

    /// Says, once per start, that the key-encryption key file lies in the data directory beside the SQLite database
    /// that holds the keys it seals (the default), and where to move it. With PostgreSQL the sealed keys are in the
    /// database, not in the data directory, and nothing is said.
    static func warnIfBesideTheDatabase(
        _ path: String, _ configuration: ServerConfiguration, log: @Sendable (String) -> Void
    ) {
        guard configuration.postgres == nil else { return }
        func resolved(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
        let data = resolved(configuration.dataDirectory)
        guard resolved(path).hasPrefix(data.hasSuffix("/") ? data : data + "/") else { return }
        log(
            "the key-encryption key \(path) is in the data directory \(configuration.dataDirectory): a backup of this "
                + "folder holds both the sealed keys and the key that opens them. Move the key out of it (for example "
                + "to /etc/flagserver/signing-key, mode 600, on another disk than the backups) and start with "
                + "--signing-key-file PATH, or pass it in \(signingKeyEnvironment) (docs/signing.md)")
    }

    private static func read(_ path: String, log: @Sendable (String) -> Void) throws -> KeyEncryptionKey {
        let url = URL(fileURLWithPath: path)
        if case .repaired(let mode) = try TokenAuthority.secureTokenFile(url) {
            log(
                "\(path) was readable by others (mode \(String(mode, radix: 8))); it is owner-only (600) now, but"
                    + " whoever could read it, with a copy of the database, holds the sets' signing keys")
        }
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw ConfigurationError("cannot read the signing key file \(path): \(error.localizedDescription)")
        }
        // One line break at the end is what `echo` and editors leave; anything else inside is refused.
        return try parse(text.hasSuffix("\n") ? String(text.dropLast()) : text, source: path)
    }

    private static func parse(_ text: String, source: String) throws -> KeyEncryptionKey {
        do {
            return try KeyEncryptionKey(base64: text)
        } catch {
            throw ConfigurationError("\(source): \(error)")
        }
    }
}
