/// Whole response heads of prepared responses (`HTTPResponse.prepared`) as last encoded on one loop: the status
/// line and fields, this second's `Date` and the framing. A prepared response served again in the same second with
/// the same framing reuses the head's bytes (a reference count) instead of allocating and copying ~150 bytes, which
/// was about a twentieth of a 304's instructions.
///
/// Owned by its loop and used only on the loop's thread. Entries hold their `PreparedHead`, so an identity compared
/// here is never that of a freed head reused by a new one.
struct PreparedHeadCache {
    private struct Entry {
        var prepared: PreparedHead?
        var second: Int64 = .min
        var bodyCount = 0
        var close = false
        var version = HTTPVersion.http1_1
        var head: [UInt8] = []
    }

    /// A few entries, one per prepared head by address: the 200 and 304 of the sets being polled.
    private static let slotCount = 8
    private var entries = [Entry](repeating: Entry(), count: slotCount)

    /// The encoding of `response` (whose `prepared` is `prepared`) as `HTTPResponseEncoder.encode` gives it.
    mutating func encode(
        _ response: HTTPResponse, _ prepared: PreparedHead, _ context: HTTPResponseEncoder.Context,
        date: HTTPDateCache
    ) -> (head: [UInt8], body: [UInt8]?) {
        let sendsBody =
            !context.isHeadRequest && HTTPResponseEncoder.allowsBody(response.status) && !response.body.isEmpty
        let body = sendsBody ? response.body : nil
        // Heap objects are 16-byte aligned: the bits above those pick the slot.
        let slot = Int(truncatingIfNeeded: UInt(bitPattern: ObjectIdentifier(prepared)) >> 4) & (Self.slotCount - 1)
        if entries[slot].prepared === prepared && entries[slot].second == date.second
            && entries[slot].bodyCount == response.body.count && entries[slot].close == context.close
            && entries[slot].version == context.version
        {
            return (entries[slot].head, body)
        }
        let (head, _) = HTTPResponseEncoder.encode(response, context, date: date.line)
        entries[slot] = Entry(
            prepared: prepared, second: date.second, bodyCount: response.body.count, close: context.close,
            version: context.version, head: head)
        return (head, body)
    }
}
