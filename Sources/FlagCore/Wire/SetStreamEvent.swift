/// The events of a set's Server-Sent Events stream (SPEC §4), by their `event:` name, what each one's `data`
/// holds, and their framing (the WHATWG `text/event-stream` format) as the server writes them.
public enum SetStreamEvent: String, Sendable, CaseIterable {
    /// `data` is the whole document (`FlagSet.decode`), `id` its version: sent on connect.
    case put
    /// `data` is a `SetPatch`, `id` the version it makes: sent once per version.
    case patch

    /// The whole frame of this event: `event:`, `id:`, a `signature:` for a signed set (docs/signing.md) and one
    /// `data:` line (the JSON documents carry no raw line breaks), then a blank line.
    public func frame(id: String, signature: String? = nil, data: [UInt8]) -> [UInt8] {
        var frame = head(id: id, signature: signature)
        frame.reserveCapacity(frame.count + data.count + 2)
        frame += data
        frame += [0x0A, 0x0A]
        return frame
    }

    /// The frame up to its data, for a stream that writes a large `data` from where it is: the frame is then this,
    /// the data, and `end`.
    public func head(id: String, signature: String? = nil) -> [UInt8] {
        let signatureLine = signature.map { "signature: \($0)\n" } ?? ""
        return Array("event: \(rawValue)\nid: \(id)\n\(signatureLine)data: ".utf8)
    }

    /// What ends a frame after its data.
    public static let end: [UInt8] = [0x0A, 0x0A]

    /// A comment line that keeps proxies and clients from timing the stream out.
    public static let heartbeat: [UInt8] = Array(": heartbeat\n\n".utf8)

    /// The comment sent on connect instead of a `put` when `Last-Event-ID` is the current version. Without it the
    /// client could not tell "nothing newer" from "the put is still on its way", and would either call a stale cached
    /// set live (its `ready` answering before the newer set arrives) or wait for the first heartbeat.
    public static let current: [UInt8] = Array(": current\n\n".utf8)
}
