import FlagHTTP

/// `flagserver [--config FILE] [--listen HOST:PORT] [--data DIR] [--postgres CONNINFO] [--trusted-proxy CIDR]...`:
/// what the command line asked for.
package struct CommandLineOptions: Sendable, Equatable {
    /// The configuration file; `nil` uses `config/flagserver.json` when it exists, else the defaults.
    package var configPath: String?
    /// `HOST:PORT`, beating the file.
    package var listen: String?
    /// The data directory, beating the file.
    package var dataDirectory: String?
    /// The PostgreSQL connection string, beating `FLAGSERVER_POSTGRES` and the file.
    package var postgres: String?
    /// The key-encryption key file, beating the file's `signingKeyFile`.
    package var signingKeyFile: String?
    /// The networks of `--trusted-proxy`, in order; when any is given they replace the file's `trustedProxies`.
    package var trustedProxies: [CIDR] = []
    /// `--allow-private-webhooks` was given.
    package var allowPrivateWebhooks = false
    /// `--public-url`, beating the file's `publicURL`.
    package var publicURL: String?
    /// `--help` was given.
    package var help = false

    /// The usage text.
    package static let usage = """
        usage: flagserver [--config FILE] [--listen HOST:PORT] [--data DIR] [--postgres CONNINFO]
                          [--signing-key-file FILE] [--trusted-proxy CIDR]... [--public-url URL]
                          [--allow-private-webhooks]

          --config FILE        configuration file (default: config/flagserver.json if it exists)
          --listen HOST:PORT   address to listen on (default 127.0.0.1:8080)
          --data DIR           data directory for the SQLite store and the first admin token (default ./data)
          --postgres CONNINFO  keep everything in this PostgreSQL database instead (a libpq URI or key=value
                               string), shared with every flagserver given the same one; prefer
                               FLAGSERVER_POSTGRES or a PGPASSFILE, since a command line shows in `ps`
          --signing-key-file FILE
                               the key-encryption key that seals the sets' signing keys (base64 of 32 bytes,
                               mode 600); default DIR/signing-key with SQLite, made on first start
          --trusted-proxy CIDR a network of the load balancers or proxies in front (10.0.0.0/8, 192.0.2.7,
                               2001:db8::/32), whose X-Forwarded-For then names the client for rate limits,
                               connection caps and logs; repeat it for several; replaces the file's
                               trustedProxies (default: trust no one)
          --public-url URL     where people reach the dashboard (https://flags.example.com), for the links
                               in webhook messages
          --allow-private-webhooks
                               let webhooks post to loopback, private, link-local and metadata addresses
                               (tests and private networks; default: public addresses only)
          -h, --help           show this help

        FLAGSERVER_ADMIN_TOKEN, when set, is accepted as an admin token.
        FLAGSERVER_POSTGRES, when set, is the PostgreSQL connection string (--postgres beats it).
        FLAGSERVER_SIGNING_KEY, when set, is the key-encryption key itself (it beats any file).
        """

    /// The environment variable holding the PostgreSQL connection string.
    package static let postgresEnvironment = "FLAGSERVER_POSTGRES"

    /// Options from the arguments after the program name; a bad argument throws a message for stderr.
    package static func parse(_ arguments: [String]) throws -> CommandLineOptions {
        var options = CommandLineOptions()
        var index = 0
        while index < arguments.count {
            var argument = arguments[index]
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            func value() throws -> String {
                if let inlineValue { return inlineValue }
                index += 1
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ConfigurationError("\(argument) needs a value")
                }
                return arguments[index]
            }
            switch argument {
            case "--config": options.configPath = try value()
            case "--listen":
                let listen = try value()
                var probe = ServerConfiguration()
                try probe.setListen(listen, source: "--listen")
                options.listen = listen
            case "--data": options.dataDirectory = try value()
            case "--postgres": options.postgres = try value()
            case "--signing-key-file": options.signingKeyFile = try value()
            case "--trusted-proxy":
                options.trustedProxies.append(try ServerConfiguration.network(try value(), source: "--trusted-proxy"))
            case "--public-url":
                options.publicURL = try ServerConfiguration.publicURL(try value(), source: "--public-url")
            case "--allow-private-webhooks": options.allowPrivateWebhooks = true
            case "-h", "--help": options.help = true
            default: throw ConfigurationError("unknown argument \"\(argument)\"")
            }
            index += 1
        }
        return options
    }

    /// The configuration these options select: the file's, then `FLAGSERVER_POSTGRES` from `environment`, then the
    /// flags on top.
    package func configuration(
        fileExists: (String) -> Bool, environment: [String: String] = [:]
    ) throws -> ServerConfiguration {
        var configuration: ServerConfiguration
        if let configPath {
            configuration = try ServerConfiguration.load(path: configPath)
        } else if fileExists("config/flagserver.json") {
            configuration = try ServerConfiguration.load(path: "config/flagserver.json")
        } else {
            configuration = ServerConfiguration()
        }
        if let listen { try configuration.setListen(listen, source: "--listen") }
        if let dataDirectory { configuration.dataDirectory = dataDirectory }
        if let postgres = environment[Self.postgresEnvironment], !postgres.isEmpty { configuration.postgres = postgres }
        if let postgres { configuration.postgres = postgres }
        if let signingKeyFile { configuration.signingKeyFile = signingKeyFile }
        if !trustedProxies.isEmpty { configuration.trustedProxies = trustedProxies }
        if allowPrivateWebhooks { configuration.allowPrivateWebhooks = true }
        if let publicURL { configuration.publicURL = publicURL }
        return configuration
    }
}
