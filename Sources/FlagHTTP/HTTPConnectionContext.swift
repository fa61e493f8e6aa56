import FlagLock

/// State that lives as long as one client connection, shared by the requests that arrive on it.
///
/// The engine creates one per connection and hands it along with every request (`HTTPRequest.connection`), so a
/// handler can remember a decision that depends only on bytes the client repeats on each request of a keep-alive
/// connection — the application keeps its token check here instead of hashing the same token again.
public final class HTTPConnectionContext: Sendable {
    /// What the handler keeps; any immutable, Sendable object.
    private let slot = Locked<(any AnyObject & Sendable)?>(nil)

    /// An empty context (one per connection; tests may make their own).
    public init() {}

    /// The object last stored, or nil.
    public var attachment: (any AnyObject & Sendable)? {
        slot.withLock { $0 }
    }

    /// Replaces the stored object (nil forgets it).
    public func attach(_ value: (any AnyObject & Sendable)?) {
        slot.withLock { $0 = value }
    }
}
