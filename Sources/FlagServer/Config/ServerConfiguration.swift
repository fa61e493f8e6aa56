import FlagCore
import FlagHTTP
import Foundation

/// Why the server's configuration or command line is unusable, naming the field or argument at fault.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and how to fix it.
    public let message: String

    /// An error with its message.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Everything `flagserver` reads from `config/flagserver.json`, with the defaults of SPEC §7. Relative paths are
/// relative to the working directory.
public struct ServerConfiguration: Sendable, Equatable {
    /// The address to listen on.
    public var host = "127.0.0.1"
    /// The port to listen on; 0 picks a free one.
    public var port = 8080
    /// Where the SQLite store and the first-start admin token live.
    public var dataDirectory = "./data"
    /// The PostgreSQL database to keep everything in instead of SQLite, as a libpq connection string (a URI or
    /// key=value pairs), shared by every server given the same one; `nil` keeps the SQLite store. It may hold a
    /// password, so it is never printed.
    public var postgres: String?
    /// Flag-set documents (`*.json`) imported when the store has no sets; `nil` imports nothing.
    public var seedDirectory: String? = "config/flagsets"
    /// The file holding the key-encryption key that seals the sets' signing keys (docs/signing.md); `nil` uses
    /// `signing-key` in the data directory with SQLite (made on first start), and none with PostgreSQL.
    public var signingKeyFile: String?
    /// The environment variable whose value is accepted as an admin token (name `env`).
    public var adminTokenEnvironment = "FLAGSERVER_ADMIN_TOKEN"
    /// Request body limit in bytes (413 above).
    public var maxBodyBytes = 1024 * 1024
    /// Request head limit in bytes (431 above).
    public var maxHeaderBytes = 16 * 1024
    /// Header fields per request (431 above).
    public var maxHeaderCount = 100
    /// Seconds a client may take to send a request head.
    public var headerReadTimeoutSeconds = 10
    /// Seconds a keep-alive connection may stay idle.
    public var idleTimeoutSeconds = 60
    /// The slowest average rate, in bytes per second, a request body may arrive at after the header read timeout.
    public var minBodyBytesPerSecond = 1024
    /// Open connections before new ones get a 503.
    public var maxConnections = 10_000
    /// Open connections per client address before new ones get a 503; 0 turns the cap off
    /// (`HTTPServerConfiguration.maxConnectionsPerAddress`).
    public var maxConnectionsPerAddress = 512
    /// The networks of the proxies in front of the server, whose `X-Forwarded-For` names the client
    /// (`HTTPServerConfiguration.trustedProxies`); empty trusts no one.
    public var trustedProxies: [CIDR] = []
    /// Webhooks may post to loopback, private, link-local and metadata addresses (tests, private networks).
    public var allowPrivateWebhooks = false
    /// Where people reach the dashboard (`https://flags.example.com`), for the links in Slack messages.
    public var publicURL: String?
    /// Event-loop threads; 0 uses one per core.
    public var loopCount = 0
    /// The longest long-poll, in seconds.
    public var longPollMaxSeconds = 300
    /// Seconds between heartbeat comments on event streams.
    public var heartbeatSeconds = 15
    /// Seconds a shutdown waits for in-flight requests.
    public var shutdownGraceSeconds = 10
    /// New telemetry instance ids one client address may get at once (docs/telemetry.md).
    public var instanceMintBurst = 20
    /// New telemetry instance ids per second per client address once the burst is spent.
    public var instanceMintsPerSecond = 1.0

    /// The defaults.
    public init() {}

    /// The SQLite file in the data directory.
    public var databasePath: String { (dataDirectory as NSString).appendingPathComponent("flagserver.sqlite") }
    /// The SQLite store's key-encryption key file, made on first start, when `signingKeyFile` names none.
    public var defaultSigningKeyFile: String { (dataDirectory as NSString).appendingPathComponent("signing-key") }
    /// Where a first-start admin token is written.
    public var adminTokenFile: String { (dataDirectory as NSString).appendingPathComponent("admin-token") }

    /// The HTTP engine's configuration.
    public var http: HTTPServerConfiguration {
        var http = HTTPServerConfiguration(
            host: host, port: port, loopCount: loopCount > 0 ? loopCount : HTTPServerConfiguration.coreCount,
            limits: HTTPParserLimits(
                maxHeaderBytes: maxHeaderBytes, maxHeaderCount: maxHeaderCount, maxBodyBytes: maxBodyBytes),
            headerReadTimeout: .seconds(headerReadTimeoutSeconds), idleTimeout: .seconds(idleTimeoutSeconds),
            maxConnections: maxConnections)
        http.minBodyBytesPerSecond = minBodyBytesPerSecond
        http.maxConnectionsPerAddress = maxConnectionsPerAddress
        http.trustedProxies = trustedProxies
        http.renderRejection = FlagServerApp.renderRejection
        return http
    }

    /// The configuration file's name for an engine limit, e.g. `limits.maxBodyBytes`, so that an error can say what
    /// to raise; nil for a limit the file does not set (the engine's default then holds).
    package static func setting(for limit: HTTPLimit) -> String? {
        switch limit {
        case .maxBodyBytes: "limits.maxBodyBytes"
        case .maxHeaderBytes: "limits.maxHeaderBytes"
        case .maxHeaderCount: "limits.maxHeaderCount"
        case .maxConnections: "limits.maxConnections"
        case .maxConnectionsPerAddress: "limits.maxConnectionsPerAddress"
        case .maxRequestLineBytes, .maxChunkLineBytes: nil
        }
    }

    /// The application layer's settings.
    package var app: FlagServerApp.Settings {
        var settings = FlagServerApp.Settings(
            longPollMaxSeconds: longPollMaxSeconds, heartbeatInterval: .seconds(heartbeatSeconds))
        settings.webhooks.allowPrivate = allowPrivateWebhooks
        settings.webhooks.publicURL = publicURL
        return settings
    }

    /// Client telemetry's bounds: the defaults, with the ones the file sets.
    package var telemetry: ClientTelemetry.Limits {
        var limits = ClientTelemetry.Limits()
        limits.mintBurst = Double(instanceMintBurst)
        limits.mintsPerSecond = instanceMintsPerSecond
        return limits
    }

    /// Reads a configuration file: unknown fields are ignored, a field of the wrong type is an error naming it.
    public static func load(path: String) throws -> ServerConfiguration {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ConfigurationError("cannot read the configuration file \(path): \(error.localizedDescription)")
        }
        return try parse(bytes, source: path)
    }

    /// Reads configuration JSON; `source` names it in error messages.
    public static func parse(_ bytes: [UInt8], source: String) throws -> ServerConfiguration {
        let root: JSONValue
        do {
            root = try JSONReader.parse(bytes)
        } catch {
            throw ConfigurationError("\(source) is not valid JSON: \(error)")
        }
        guard case .object(let object) = root else { throw ConfigurationError("\(source) must hold a JSON object") }
        var configuration = ServerConfiguration()
        func string(_ name: String, _ value: JSONValue) throws -> String {
            guard case .string(let text) = value else {
                throw ConfigurationError("\(source): \(name) must be a string")
            }
            return text
        }
        func int(_ name: String, _ value: JSONValue, minimum: Int) throws -> Int {
            guard case .int(let number) = value, let int = Int(exactly: number), int >= minimum else {
                throw ConfigurationError("\(source): \(name) must be a whole number of at least \(minimum)")
            }
            return int
        }
        func positive(_ name: String, _ value: JSONValue) throws -> Double {
            let number: Double? =
                switch value {
                case .int(let number): Double(number)
                case .double(let number): number
                default: nil
                }
            guard let number, number > 0, number.isFinite else {
                throw ConfigurationError("\(source): \(name) must be a number above 0")
            }
            return number
        }
        for (name, value) in object {
            switch name {
            case "listen": try configuration.setListen(try string(name, value), source: "\(source): listen")
            case "dataDirectory": configuration.dataDirectory = try string(name, value)
            case "postgres": configuration.postgres = value == .null ? nil : try string(name, value)
            case "seedDirectory":
                configuration.seedDirectory = value == .null ? nil : try string(name, value)
            case "adminTokenEnvironment": configuration.adminTokenEnvironment = try string(name, value)
            case "signingKeyFile": configuration.signingKeyFile = value == .null ? nil : try string(name, value)
            case "trustedProxies": configuration.trustedProxies = try trustedProxies(value, source: source)
            case "allowPrivateWebhooks":
                guard case .bool(let allow) = value else {
                    throw ConfigurationError("\(source): allowPrivateWebhooks must be true or false")
                }
                configuration.allowPrivateWebhooks = allow
            case "publicURL":
                configuration.publicURL = value == .null ? nil : try publicURL(try string(name, value), source: source)
            case "telemetry":
                guard case .object(let telemetry) = value else {
                    throw ConfigurationError("\(source): telemetry must be an object")
                }
                for (setting, value) in telemetry {
                    let path = "telemetry.\(setting)"
                    switch setting {
                    case "instanceMintBurst": configuration.instanceMintBurst = try int(path, value, minimum: 1)
                    case "instanceMintsPerSecond": configuration.instanceMintsPerSecond = try positive(path, value)
                    default: continue
                    }
                }
            case "limits":
                guard case .object(let limits) = value else {
                    throw ConfigurationError("\(source): limits must be an object")
                }
                for (limit, value) in limits {
                    let path = "limits.\(limit)"
                    switch limit {
                    case "maxBodyBytes": configuration.maxBodyBytes = try int(path, value, minimum: 1)
                    case "maxHeaderBytes": configuration.maxHeaderBytes = try int(path, value, minimum: 256)
                    case "maxHeaderCount": configuration.maxHeaderCount = try int(path, value, minimum: 1)
                    case "headerReadTimeoutSeconds":
                        configuration.headerReadTimeoutSeconds = try int(path, value, minimum: 1)
                    case "idleTimeoutSeconds": configuration.idleTimeoutSeconds = try int(path, value, minimum: 1)
                    case "minBodyBytesPerSecond":
                        configuration.minBodyBytesPerSecond = try int(path, value, minimum: 1)
                    case "maxConnections": configuration.maxConnections = try int(path, value, minimum: 1)
                    case "maxConnectionsPerAddress":
                        configuration.maxConnectionsPerAddress = try int(path, value, minimum: 0)
                    case "loopCount": configuration.loopCount = try int(path, value, minimum: 0)
                    case "longPollMaxSeconds": configuration.longPollMaxSeconds = try int(path, value, minimum: 0)
                    case "heartbeatSeconds": configuration.heartbeatSeconds = try int(path, value, minimum: 1)
                    case "shutdownGraceSeconds": configuration.shutdownGraceSeconds = try int(path, value, minimum: 0)
                    default: continue
                    }
                }
            default: continue
            }
        }
        return configuration
    }

    /// `publicURL` checked: an absolute `http` or `https` URL, without a query or fragment.
    package static func publicURL(_ text: String, source: String) throws -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", components.host?.isEmpty == false, components.query == nil,
            components.fragment == nil
        else {
            throw ConfigurationError(
                "\(source): publicURL must be the dashboard's address, such as https://flags.example.com")
        }
        return text
    }

    /// The networks of `trustedProxies`: a list of CIDR strings (`null` is none).
    private static func trustedProxies(_ value: JSONValue, source: String) throws -> [CIDR] {
        if value == .null { return [] }
        guard case .array(let items) = value else {
            throw ConfigurationError(
                "\(source): trustedProxies must be a list of networks, such as [\"10.0.0.0/8\", \"2001:db8::/32\"]")
        }
        return try items.enumerated().map { index, item in
            guard case .string(let text) = item else {
                throw ConfigurationError("\(source): trustedProxies[\(index)] must be a string such as \"10.0.0.0/8\"")
            }
            return try network(text, source: "\(source): trustedProxies[\(index)]")
        }
    }

    /// One trusted network; `source` names where it was written in the error.
    static func network(_ text: String, source: String) throws -> CIDR {
        do {
            return try CIDR(text)
        } catch {
            throw ConfigurationError("\(source): \(error.message)")
        }
    }

    /// Sets host and port from `HOST:PORT` (`[::1]:8080` for IPv6).
    public mutating func setListen(_ text: String, source: String) throws {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            hostPart = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.hasPrefix(":") else {
                throw ConfigurationError("\(source): expected [HOST]:PORT, got \"\(text)\"")
            }
            portPart = after.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ConfigurationError("\(source): expected HOST:PORT such as 127.0.0.1:8080, got \"\(text)\"")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (0...65_535).contains(port) else {
            throw ConfigurationError("\(source): expected HOST:PORT with a port from 0 to 65535, got \"\(text)\"")
        }
        host = String(hostPart)
        self.port = port
    }
}
