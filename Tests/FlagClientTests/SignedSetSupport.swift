import FlagCore
import FlagSigning
import FlagTestSupport
import Foundation
import Testing

@testable import FlagClient

/// Keys, documents and clients for the signed-set tests.
enum Signed {
    /// A private key made from 32 copies of `byte`: fixed, so that a failure reproduces.
    static func key(_ byte: UInt8) throws -> PrivateSigningKey {
        try PrivateSigningKey(seed: Array(repeating: byte, count: 32))
    }

    /// The `max-items` flag serving `value`.
    static func items(_ value: Int64) -> Flag {
        Flag(key: "max-items", type: .int, defaultValue: .int(value), killValue: .int(0))
    }

    /// Set `ios-prod` at `version`: `new-checkout` on, `max-items` serving `items`.
    static func document(_ version: Int, items: Int64) -> FlagSet {
        Docs.set(version: version, flags: [Docs.flag("new-checkout", true), Self.items(items)])
    }

    /// The patch to `version` from the version before it, setting `max-items` to `items`.
    static func patch(_ version: Int, items: Int64) -> SetPatch {
        SetPatch(version: version, base: version - 1, flags: ["max-items": Self.items(items).encoded()])
    }

    /// `document`'s bytes and their signature by `key`, as `flagctl export --signed` writes them (the `.sig` file
    /// ends in a line break).
    static func export(_ document: FlagSet, key: PrivateSigningKey) throws -> (bytes: [UInt8], signature: String) {
        let bytes = document.encoded()
        let message = SignedMessage(set: document.name, version: document.version, baseVersion: nil, body: bytes)
        return (bytes, try key.sign(message).headerValue + "\n")
    }

    /// A client of `ios-prod` at `server` with `sdkKey`, built as an app builds it (URLSession, system clock),
    /// trusting `keys`.
    static func client(
        _ server: URL, sdkKey: String = "sdk-key", cache: URL?, trusting keys: [SigningKey], logs: LogSink,
        configure: (inout FlagClient.Configuration) -> Void = { _ in }
    ) throws -> FlagClient {
        var configuration = FlagClient.Configuration(
            server: server, set: "ios-prod", sdkKey: sdkKey, cacheDirectory: cache)
        configuration.environment = [:]
        configuration.telemetry = .off
        configuration.trustedKeys = keys
        configuration.logger = logs.logger
        configure(&configuration)
        return try FlagClient(configuration: configuration)
    }

    /// Runs `body` with a `SigningSetServer` of `ios-prod` that signs with key 1 and serves `document`, and a client
    /// of it (its cache in a fresh directory) trusting `keys`, key 1 unless given, once the client is ready. The
    /// client follows the server by `refresh`, polling every second, or by its default. Both stop when `body` returns.
    static func withReadyClient(
        document: FlagSet = document(1, items: 20), spoil: SigningSetServer.Spoil = .none,
        trusting keys: [SigningKey]? = nil, refresh: RefreshMode? = nil,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (SigningSetServer, FlagClient, LogSink) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let key = try Self.key(1)
            let server = try SigningSetServer(set: "ios-prod", key: key, document: document, spoil: spoil)
            defer { server.stop() }
            let logs = LogSink()
            let client = try Self.client(
                server.url, cache: directory, trusting: keys ?? [key.signingKey], logs: logs
            ) { configuration in
                if let refresh {
                    configuration.refresh = refresh
                    configuration.pollInterval = 1
                }
            }
            defer { client.shutdown() }
            #expect(await client.ready(timeout: .patience), sourceLocation: sourceLocation)
            try await body(server, client, logs)
        }
    }

    /// The refusal the client's state names, if it names one.
    static func refusal(_ client: FlagClient) -> SetRefusal? {
        if case .refused(_, let refusal) = client.state { return refusal }
        return nil
    }

    /// The value of `max-items` and the version it came from.
    static func served(_ client: FlagClient) -> (items: Int, version: Int?) {
        let detail = client.session(unitID: "u-1").detail(.maxItems)
        return (detail.value, detail.version)
    }
}

extension LogSink {
    /// The messages of refusals logged so far.
    var refusals: [String] {
        messages.filter { $0.level == .error && $0.message.contains("refused") }.map(\.message)
    }
}
