import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The first-start admin token: created when no admin token is configured, written once to a file only its owner
/// can read.
extension TokenAuthority {
    /// Creates an admin token named `admin` and writes it to `file` (mode 0600) when there is neither an active
    /// stored admin token nor an environment token. Returns the file written, or `nil` when one was not needed.
    package func bootstrapAdminToken(file: URL, environmentTokenSet: Bool) throws -> URL? {
        guard !environmentTokenSet, !hasStoredAdminToken else { return nil }
        let existing = try tokens(set: nil).map(\.name)
        var name = "admin"
        var suffix = 1
        while existing.contains(name) {
            suffix += 1
            name = "admin-\(suffix)"
        }
        // The file first, then the hash: a crash between the two leaves a file whose token is not stored yet, and
        // the next start makes a new one. The other order left a stored admin token nobody knows, so no new one.
        let token = Self.generate(prefix: "fsa_")
        try Self.writeSecret(token + "\n", to: file)
        try save(
            token: token, name: name, role: .admin(.admin, sets: nil),
            note: ChangeNote(actor: "flagserver", action: "token.create", reason: "first start: no admin token"))
        return file
    }

    /// Writes `text` to a new file readable and writable only by its owner, replacing any older file.
    static func writeSecret(_ text: String, to file: URL) throws {
        let path = file.path
        if unlink(path) != 0 && errno != ENOENT {
            throw ServiceError.unavailable("cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw ServiceError.unavailable("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if result < 0 {
                if errno == EINTR { continue }
                throw ServiceError.unavailable("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            throw ServiceError.unavailable("cannot sync \(path): \(String(cString: strerror(errno)))")
        }
    }
}

/// Keeping an existing token file owner-only.
extension TokenAuthority {
    /// What `secureTokenFile` found.
    enum TokenFileCheck: Equatable {
        /// There is no token file.
        case absent
        /// The file was already readable only by its owner.
        case ownerOnly
        /// The file was readable by others (the old mode is given) and is now 0600.
        case repaired(previousMode: mode_t)
    }

    /// Makes an existing token file owner-only again: a file that others may read (mode 0644 after a careless
    /// `chmod` or a copy) is changed to 0600 and reported, because the server keeps running on what is in its
    /// store, not on the file. What cannot be repaired safely is refused: a symbolic link (a chmod would change
    /// whatever it points to), something other than a plain file, or a file owned by another user.
    static func secureTokenFile(_ file: URL) throws -> TokenFileCheck {
        let path = file.path
        // O_NOFOLLOW: a link is refused rather than followed; O_NONBLOCK: a FIFO planted there cannot block start.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return .absent }
            if code == ELOOP {
                throw ConfigurationError(
                    "\(path) is a symbolic link; the admin token file must be a plain file: remove it")
            }
            throw ConfigurationError("cannot check \(path): \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw ConfigurationError("cannot check \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ConfigurationError("\(path) is not a plain file; the admin token file must be one: remove it")
        }
        guard status.st_uid == geteuid() else {
            throw ConfigurationError(
                "\(path) belongs to user \(status.st_uid), not to the server's user \(geteuid()): remove it")
        }
        let mode = status.st_mode & 0o7777
        guard mode & 0o077 != 0 else { return .ownerOnly }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw ConfigurationError(
                "\(path) is readable by others (mode \(String(mode, radix: 8))) and cannot be made owner-only: "
                    + String(cString: strerror(errno)))
        }
        return .repaired(previousMode: mode)
    }
}
