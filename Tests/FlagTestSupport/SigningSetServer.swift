import FlagCore
import FlagHTTP
import FlagLock
import FlagSigning
import Foundation

/// A server of one signed flag set for clients that verify, on the real HTTP engine and a port of its own:
/// the wire contract of docs/signing.md, written from that page rather than taken from FlagServer, so that a client
/// is tested against the contract.
///
/// - `GET /v1/sets/{set}` (any `?wait=` answers at once): the current document, `ETag`, `Flagstaff-Signature`;
///   304 for a current `If-None-Match`.
/// - `GET /v1/sets/{set}/versions/{n}`: version `n`, signed.
/// - `GET /v1/sets/{set}/stream`: `: current` when `Last-Event-ID` is current, else the `patch` events since it (a
///   `put` when one is missing), then an event per version published, each with a `signature:` line before `data:`.
///
/// Each version is signed once, when published, by the active key; a ``Spoil`` makes that signature wrong on purpose
/// (absent, another set's, another key's, garbled), and ``serve(version:)`` answers with an older version, as a
/// cache replaying it would.
public final class SigningSetServer: Sendable {
    /// What goes wrong with a version's signature.
    public enum Spoil: Sendable {
        /// Signed by the active key, as the server would.
        case none
        /// No signature at all.
        case unsigned
        /// Signed by the active key, but for another set.
        case signedForSet(String)
        /// Signed by another key.
        case signedBy(PrivateSigningKey)
        /// The active key's signature with one byte changed.
        case garbled
    }

    /// A version's signed bytes: its whole document, and the patch from the version before (none for the first).
    struct Version: Sendable {
        var number: Int
        var document: [UInt8]
        var documentSignature: String?
        var patch: [UInt8]?
        var patchSignature: String?
    }

    struct State: Sendable {
        var key: PrivateSigningKey
        var versions: [Int: Version] = [:]
        var current = 0
        /// The version answered as current, when an older one is served on purpose.
        var served: Int?
        var streams: [HTTPStream] = []
        var paths: [String] = []
    }

    /// The set served.
    public let set: String
    private let state: Locked<State>
    private let live: Locked<LiveHTTPServer?> = Locked(nil)

    /// Starts serving `set` at version `document.version`, signed by `key`.
    public init(set: String, key: PrivateSigningKey, document: FlagSet, spoil: Spoil = .none) throws {
        self.set = set
        self.state = Locked(State(key: key))
        let server = try LiveHTTPServer(
            configuration: LiveHTTPServer.configuration { $0.loopCount = 1 },
            handler: { [weak self] request, responder in
                guard let self else { return responder.respond(HTTPResponse(status: 503)) }
                self.handle(request, responder)
            })
        live.withLock { $0 = server }
        try publish(document, patch: nil, spoil: spoil)
    }

    /// The server's base URL.
    public var url: URL {
        URL(string: "http://127.0.0.1:\(live.withLock { $0?.port ?? 0 })")!
    }

    /// The port it listens on.
    public var port: Int { live.withLock { $0?.port ?? 0 } }

    /// The request paths (with their queries) received so far, in order.
    public var paths: [String] { state.withLock { $0.paths } }

    /// Signs versions published from now on with `key` (a rotation's `activate`).
    public func activate(_ key: PrivateSigningKey) {
        state.withLock { $0.key = key }
    }

    /// Makes `document` the current version, with `patch` (its changes from the version before) sent to the open
    /// streams, or a `put` when there is none. The signatures of both are spoiled as `spoil` says.
    public func publish(_ document: FlagSet, patch: SetPatch?, spoil: Spoil = .none) throws {
        let bytes = document.encoded()
        let patchBytes = patch?.encoded()
        try state.withLock { state in
            var version = Version(number: document.version, document: bytes)
            version.documentSignature = try Self.sign(
                bytes, set: set, version: document.version, base: nil, key: state.key, spoil: spoil)
            if let patch, let patchBytes {
                version.patch = patchBytes
                version.patchSignature = try Self.sign(
                    patchBytes, set: set, version: patch.version, base: patch.base, key: state.key, spoil: spoil)
            }
            state.versions[document.version] = version
            state.current = document.version
            state.streams.removeAll { !$0.isOpen }
            // Written under the lock, as a new stream's first frames are, so that no stream misses a version or
            // receives one out of order.
            let event = Self.frame(version, patch: patch != nil)
            for stream in state.streams { stream.write(event) }
        }
    }

    /// Answers with version `version` as if it were current (a cache or proxy replaying it); `nil` stops.
    public func serve(version: Int?) {
        state.withLock { $0.served = version }
    }

    /// Ends every open stream (the clients reconnect).
    public func dropStreams() {
        for stream in state.withLock({ $0.streams }) { stream.finish() }
    }

    /// Stops the server.
    public func stop() {
        live.withLock { $0?.stop(deadline: .milliseconds(200)) }
    }

    deinit {
        live.withLock { $0?.stop(deadline: .milliseconds(200)) }
    }

    /// The signature value of `bytes` for the message a client builds, spoiled as `spoil` says; `nil` when unsigned.
    public static func sign(
        _ bytes: [UInt8], set: String, version: Int, base: Int?, key: PrivateSigningKey, spoil: Spoil
    ) throws -> String? {
        func message(_ set: String) -> SignedMessage {
            SignedMessage(set: set, version: version, baseVersion: base, body: bytes)
        }
        switch spoil {
        case .none: return try key.sign(message(set)).headerValue
        case .unsigned: return nil
        case .signedForSet(let other): return try key.sign(message(other)).headerValue
        case .signedBy(let other): return try other.sign(message(set)).headerValue
        case .garbled:
            let signature = try key.sign(message(set))
            var bytes = signature.bytes
            bytes[10] ^= 0x01
            return try Signature(keyID: signature.keyID, bytes: bytes).headerValue
        }
    }

    /// The frame of a version's patch (or its document as a `put`), with its `signature:` line.
    private static func frame(_ stored: Version, patch: Bool) -> [UInt8] {
        let (type, data, signature) =
            patch && stored.patch != nil
            ? ("patch", stored.patch ?? [], stored.patchSignature)
            : ("put", stored.document, stored.documentSignature)
        var frame = Array("event: \(type)\nid: \(stored.number)\n".utf8)
        if let signature { frame += Array("signature: \(signature)\n".utf8) }
        return frame + Array("data: ".utf8) + data + [0x0A, 0x0A]
    }

    private func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let (served, versions) = state.withLock { state in
            state.paths.append(request.target)
            return (state.served ?? state.current, state.versions)
        }
        let prefix = "/v1/sets/\(set)"
        switch request.path {
        case prefix:
            if request.headers["if-none-match"] == "\"\(served)\"" {
                return responder.respond(HTTPResponse(status: 304, headers: ["ETag": "\"\(served)\""]))
            }
            responder.respond(document(versions[served]))
        case "\(prefix)/stream":
            let stream = responder.startStream(
                HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"]))
            let last = request.headers["last-event-id"].flatMap { Int($0) }
            // Under the lock, so that a version published meanwhile follows these frames rather than being missed.
            state.withLock { state in
                let (current, served, versions) = (state.current, state.served ?? state.current, state.versions)
                let frames: [[UInt8]]
                if served != current, let version = versions[served] {
                    frames = [Self.frame(version, patch: false)]
                } else if last == current {
                    frames = [Array(": current\n\n".utf8)]
                } else if let last, last < current, (last + 1...current).allSatisfy({ versions[$0]?.patch != nil }) {
                    frames = (last + 1...current).compactMap { versions[$0].map { Self.frame($0, patch: true) } }
                } else if let version = versions[current] {
                    frames = [Self.frame(version, patch: false)]
                } else {
                    return stream.finish()
                }
                for frame in frames { stream.write(frame) }
                state.streams.append(stream)
            }
        default:
            let versionsPrefix = "\(prefix)/versions/"
            guard request.path.hasPrefix(versionsPrefix),
                let version = Int(request.path.dropFirst(versionsPrefix.count)), versions[version] != nil
            else {
                return responder.respond(HTTPResponse(status: 404))
            }
            responder.respond(document(versions[version]))
        }
    }

    private func document(_ version: Version?) -> HTTPResponse {
        guard let version else { return HTTPResponse(status: 404) }
        var headers: HTTPHeaders = ["Content-Type": "application/json", "ETag": "\"\(version.number)\""]
        if let signature = version.documentSignature {
            headers.add(name: Signature.headerName, value: signature)
        }
        return HTTPResponse(status: 200, headers: headers, body: version.document)
    }
}
