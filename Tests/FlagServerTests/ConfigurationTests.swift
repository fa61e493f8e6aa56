import FlagCore
import FlagHTTP
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("flagserver configuration and command line")
struct ConfigurationTests {
    @Test func theCheckedInConfigurationHasTheSpecDefaults() throws {
        let root = BuiltProducts.repositoryRoot
        let configuration = try ServerConfiguration.load(
            path: root.appendingPathComponent("config/flagserver.json").path)
        #expect(configuration == ServerConfiguration())
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.dataDirectory == "./data")
        #expect(configuration.http.limits.maxBodyBytes == 1_048_576)
        #expect(configuration.http.limits.maxHeaderBytes == 16_384)
        #expect(configuration.http.limits.maxHeaderCount == 100)
        #expect(configuration.http.headerReadTimeout == .seconds(10))
        #expect(configuration.http.idleTimeout == .seconds(60))
        #expect(configuration.http.minBodyBytesPerSecond == 1024)
        #expect(configuration.http.maxConnectionsPerAddress == 512)
    }

    @Test func theCapPerAddressIsReadAndZeroTurnsItOff() throws {
        let capped = try ServerConfiguration.parse(
            Array(#"{"limits":{"maxConnectionsPerAddress":64}}"#.utf8), source: "test.json")
        #expect(capped.http.maxConnectionsPerAddress == 64)
        let off = try ServerConfiguration.parse(
            Array(#"{"limits":{"maxConnectionsPerAddress":0}}"#.utf8), source: "test.json")
        #expect(off.http.maxConnectionsPerAddress == 0)
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(
                Array(#"{"limits":{"maxConnectionsPerAddress":-1}}"#.utf8), source: "test.json")
        }
        #expect(error.message == "test.json: limits.maxConnectionsPerAddress must be a whole number of at least 0")
    }

    @Test func everyCheckedInSeedSetIsValid() throws {
        let root = BuiltProducts.repositoryRoot
        try withTemporaryDirectory { directory in
            let store = try SQLiteFlagStore(path: directory.appendingPathComponent("s.sqlite").path)
            let service = try FlagService(store: store, clock: TestClock().clock)
            let seeded = try ServerBootstrap.seed(service, from: root.appendingPathComponent("config/flagsets").path)
            #expect(seeded.contains("ios-prod"))
            #expect(service.states().allSatisfy { $0.version == 1 })
        }
    }

    @Test func fileValuesAreReadAndWrongTypesNamed() throws {
        let text = """
            {"listen":"[::1]:9090","dataDirectory":"/var/lib/flags","seedDirectory":null,
             "limits":{"maxBodyBytes":2048,"heartbeatSeconds":5,"minBodyBytesPerSecond":100},"future":1}
            """
        let configuration = try ServerConfiguration.parse(Array(text.utf8), source: "test.json")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 9090)
        #expect(configuration.dataDirectory == "/var/lib/flags")
        #expect(configuration.seedDirectory == nil)
        #expect(configuration.maxBodyBytes == 2048)
        #expect(configuration.app.heartbeatInterval == .seconds(5))
        #expect(configuration.http.minBodyBytesPerSecond == 100)
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.parse(Array(#"{"limits":{"maxBodyBytes":"big"}}"#.utf8), source: "test.json")
        }
        #expect(error.message == "test.json: limits.maxBodyBytes must be a whole number of at least 1")
    }

    @Test func flagsBeatTheFile() throws {
        let options = try CommandLineOptions.parse(["--config", "x.json", "--listen=0.0.0.0:9000", "--data", "/tmp/d"])
        #expect(options == CommandLineOptions(configPath: "x.json", listen: "0.0.0.0:9000", dataDirectory: "/tmp/d"))
        let configuration = try CommandLineOptions.parse(["--listen", "0.0.0.0:9000", "--data", "/tmp/d"])
            .configuration { _ in false }
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9000)
        #expect(configuration.dataDirectory == "/tmp/d")
    }

    /// The rate of new telemetry ids per client address.
    @Test func theRateOfNewInstanceIdsIsReadFromTheFile() throws {
        let defaults = ServerConfiguration().telemetry
        #expect(defaults.mintBurst == 20 && defaults.mintsPerSecond == 1)
        let text = #"{"telemetry":{"instanceMintBurst":50,"instanceMintsPerSecond":0.5}}"#
        let read = try ServerConfiguration.parse(Array(text.utf8), source: "f").telemetry
        #expect(read.mintBurst == 50 && read.mintsPerSecond == 0.5)
        for (bad, message) in [
            (
                #"{"telemetry":{"instanceMintBurst":0}}"#,
                "f: telemetry.instanceMintBurst must be a whole number of at least 1"
            ),
            (
                #"{"telemetry":{"instanceMintsPerSecond":-1}}"#,
                "f: telemetry.instanceMintsPerSecond must be a number above 0"
            ),
            (#"{"telemetry":[]}"#, "f: telemetry must be an object"),
        ] {
            let error = #expect(throws: ConfigurationError.self) {
                try ServerConfiguration.parse(Array(bad.utf8), source: "f")
            }
            #expect(error?.message == message)
        }
    }

    @Test func trustedProxiesAreReadFromTheFileAndTheFlagsReplaceThem() throws {
        let text = #"{"trustedProxies":["10.0.0.0/8"," 2001:db8::/32","192.0.2.7"]}"#
        let file = try ServerConfiguration.parse(Array(text.utf8), source: "test.json")
        let expected = try ["10.0.0.0/8", "2001:db8::/32", "192.0.2.7/32"].map { try CIDR($0) }
        #expect(file.trustedProxies == expected)
        #expect(file.http.trustedProxies == expected)
        #expect(
            try ServerConfiguration.parse(Array(#"{"trustedProxies":null}"#.utf8), source: "f").trustedProxies == [])
        #expect(ServerConfiguration().http.trustedProxies.isEmpty, "trusts no one by default")

        let options = try CommandLineOptions.parse(["--trusted-proxy", "127.0.0.1", "--trusted-proxy=::1"])
        #expect(options.trustedProxies == [try CIDR("127.0.0.1"), try CIDR("::1")])
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("flagserver.json").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            let flagged = try CommandLineOptions.parse(["--config", path, "--trusted-proxy", "127.0.0.1"])
            #expect(try flagged.configuration { _ in true }.trustedProxies == [try CIDR("127.0.0.1")])
            let unflagged = try CommandLineOptions.parse(["--config", path])
            #expect(try unflagged.configuration { _ in true }.trustedProxies == expected)
        }
    }

    @Test(arguments: [
        (
            #"{"trustedProxies":"10.0.0.0/8"}"#,
            #"test.json: trustedProxies must be a list of networks, such as ["10.0.0.0/8", "2001:db8::/32"]"#
        ),
        (#"{"trustedProxies":[8]}"#, #"test.json: trustedProxies[0] must be a string such as "10.0.0.0/8""#),
        (
            #"{"trustedProxies":["10.0.0.0/8","10.0.0.0/40"]}"#,
            #"test.json: trustedProxies[1]: "10.0.0.0/40" has a bad prefix length: write a whole number from 0 to 32 "#
                + #"after the "/""#
        ),
    ])
    func badTrustedProxiesNameTheEntryAndWhatToWrite(text: String, message: String) {
        #expect {
            try ServerConfiguration.parse(Array(text.utf8), source: "test.json")
        } throws: { error in
            (error as? ConfigurationError)?.message == message
        }
    }

    @Test func thePostgresStringComesFromTheFlagThenTheEnvironmentThenTheFile() throws {
        let file = try ServerConfiguration.parse(Array(#"{"postgres":"postgresql://file/db"}"#.utf8), source: "f.json")
        #expect(file.postgres == "postgresql://file/db")
        #expect(try ServerConfiguration.parse(Array(#"{"postgres":null}"#.utf8), source: "f.json").postgres == nil)
        let environment = ["FLAGSERVER_POSTGRES": "host=env dbname=db"]
        let plain = try CommandLineOptions.parse([])
        #expect(try plain.configuration(fileExists: { _ in false }).postgres == nil)
        #expect(
            try plain.configuration(fileExists: { _ in false }, environment: environment).postgres
                == "host=env dbname=db")
        let flagged = try CommandLineOptions.parse(["--postgres", "postgresql://flag/db"])
        #expect(flagged.postgres == "postgresql://flag/db")
        #expect(
            try flagged.configuration(fileExists: { _ in false }, environment: environment).postgres
                == "postgresql://flag/db")
        #expect(CommandLineOptions.usage.contains("--postgres CONNINFO"))
        #expect(CommandLineOptions.usage.contains("FLAGSERVER_POSTGRES"))
    }

    @Test(arguments: [
        (["--port", "1"], "unknown argument \"--port\""),
        (["--listen"], "--listen needs a value"),
        (["--listen", "localhost"], "--listen: expected HOST:PORT such as 127.0.0.1:8080, got \"localhost\""),
        (["--listen", "h:99999"], "--listen: expected HOST:PORT with a port from 0 to 65535, got \"h:99999\""),
        (["--data", "--config"], "--data needs a value"),
        (["--trusted-proxy"], "--trusted-proxy needs a value"),
        (
            ["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "10.1.2.3/16"],
            "--trusted-proxy: \"10.1.2.3/16\" has address bits set beyond its prefix length: write the network "
                + "10.1.0.0/16, or 10.1.2.3/32 for the one address"
        ),
        (
            ["--trusted-proxy=nginx"],
            "--trusted-proxy: \"nginx\" is not a network: write an IPv4 or IPv6 address with an optional prefix "
                + "length, such as 10.0.0.0/8, 2001:db8::/32 or 192.0.2.7"
        ),
    ])
    func badArgumentsSayWhatIsWrong(arguments: [String], message: String) {
        #expect(throws: ConfigurationError.self) { try CommandLineOptions.parse(arguments) }
        do {
            _ = try CommandLineOptions.parse(arguments)
        } catch {
            #expect("\(error)" == message)
        }
    }

    @Test func seedsAreImportedOnlyIntoAnEmptyStore() throws {
        try withTemporaryDirectory { directory in
            let seeds = directory.appendingPathComponent("flagsets")
            try FileManager.default.createDirectory(at: seeds, withIntermediateDirectories: true)
            try Data(fixtureDocument.utf8).write(to: seeds.appendingPathComponent("ios.json"))
            try Data(#"{"schema":1,"flags":{}}"#.utf8).write(to: seeds.appendingPathComponent("web-prod.json"))
            try Data("not json".utf8).write(to: seeds.appendingPathComponent("notes.txt"))
            let configuration = ServerConfiguration.test(in: directory, seeds: seeds)
            let clock = TestClock()
            let first = try ServerBootstrap.quiet(configuration, clock: clock)
            #expect(first.seeded == ["ios-prod", "web-prod"])
            _ = try first.app.service.mutateFlag(
                "ios-prod", "new-checkout", note: ChangeNote(actor: "a", action: "flag.kill")
            ) {
                $0.killed = true
            }
            let second = try ServerBootstrap.quiet(configuration, clock: clock)
            #expect(second.seeded.isEmpty)
            #expect(second.app.service.state("ios-prod")?.version == 2)
            #expect(try second.app.service.audit("ios-prod", limit: 5).map(\.action) == ["flag.kill", "set.seed"])
        }
    }

    @Test func anInvalidSeedStopsTheStartNamingTheFileAndPath() throws {
        try withTemporaryDirectory { directory in
            let seeds = directory.appendingPathComponent("flagsets")
            try FileManager.default.createDirectory(at: seeds, withIntermediateDirectories: true)
            let bad = #"{"schema":1,"flags":{"x":{"type":"bool","default":"yes"}}}"#
            try Data(bad.utf8).write(to: seeds.appendingPathComponent("bad.json"))
            let configuration = ServerConfiguration.test(in: directory, seeds: seeds)
            let error = try #require(throws: ConfigurationError.self) {
                try ServerBootstrap.quiet(configuration)
            }
            #expect(error.message.contains("bad.json is invalid"))
            #expect(error.message.contains("flags.x.default"))
        }
    }
}
