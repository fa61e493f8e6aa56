import FlagCore

/// A token check remembered for one connection: the exact `Authorization` bytes that passed, whom they named, and
/// the authority's generation then (any revocation makes it stale).
final class CachedCredential: Sendable {
    let header: [UInt8]
    let principal: Principal
    let generation: Int
    /// The set this connection last read through the document route with this credential, if any.
    let document: RememberedDocument?

    init(header: [UInt8], principal: Principal, generation: Int, document: RememberedDocument? = nil) {
        self.header = header
        self.principal = principal
        self.generation = generation
        self.document = document
    }
}

/// The set a connection's document requests name, its state and whether the credential may read it, as of the
/// registry's `epoch`: while the epoch is unchanged the state is current, so a polling client's next request needs
/// neither a `String` of the set's name nor the registry's lock and hash lookup. It keeps its state alive until the
/// connection's next request or its close (the idle timeout, 60 s by default): an idle connection can hold a version
/// that has since been replaced, and the versions held at once are at most those published within one idle timeout.
final class RememberedDocument: Sendable {
    /// The set's name as it appears in the path (`/v1/sets/{name}`).
    let name: [UInt8]
    let state: SetState
    let epoch: Int
    let mayRead: Bool

    init(name: [UInt8], state: SetState, epoch: Int, mayRead: Bool) {
        self.name = name
        self.state = state
        self.epoch = epoch
        self.mayRead = mayRead
    }
}

extension TokenAuthority {
    /// `authenticate(_:)` remembered per connection: a keep-alive client repeating the `Authorization` header that
    /// passed last time is recognised by a constant-time comparison of the bytes, not by hashing the token again
    /// (SHA-256 of every request's token was a visible share of the serving profile). Any revocation since
    /// invalidates what every connection remembers.
    public func authenticate(_ authorization: String?, connection: HTTPConnectionContext?) throws -> Principal {
        guard let connection, var header = authorization, !header.isEmpty else {
            return try authenticate(authorization)
        }
        let generation = self.generation.load(ordering: .acquiring)
        if let remembered = header.withUTF8({ rememberedPrincipal(UnsafeRawBufferPointer($0), connection: connection) })
        {
            return remembered
        }
        let principal: Principal
        do {
            principal = try authenticate(header)
        } catch {
            connection.attach(nil)
            throw error
        }
        connection.attach(CachedCredential(header: Array(header.utf8), principal: principal, generation: generation))
        return principal
    }

    /// The principal remembered on `connection` for exactly these `Authorization` bytes, if no revocation has
    /// happened since; nil otherwise (then `authenticate(_:connection:)` checks the token). Lets a caller holding
    /// the header's bytes skip making a `String` of them.
    func rememberedPrincipal(_ header: UnsafeRawBufferPointer, connection: HTTPConnectionContext) -> Principal? {
        guard let cached = connection.attachment as? CachedCredential,
            cached.generation == generation.load(ordering: .acquiring),
            Self.bytesEqualInConstantTime(header, cached.header)
        else { return nil }
        return cached.principal
    }

    /// Compares without an early exit, so the time taken says nothing about where the bytes differ.
    static func bytesEqualInConstantTime(_ presented: UnsafeRawBufferPointer, _ known: [UInt8]) -> Bool {
        guard presented.count == known.count else { return false }
        var difference: UInt8 = 0
        known.withUnsafeBufferPointer { known in
            for index in 0..<known.count { difference |= presented[index] ^ known[index] }
        }
        return difference == 0
    }
}
