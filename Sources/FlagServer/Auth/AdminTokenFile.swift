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
    public func bootstrapAdminToken(file: URL, environmentTokenSet: Bool) throws -> URL? {
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
            token: token, name: name, role: .admin,
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
