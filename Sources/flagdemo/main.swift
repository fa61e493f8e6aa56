import FlagClient
import Foundation

// flagdemo: a service embedding FlagClient. The composition root: options, one client, a `CheckoutService` per
// user session, then a watch for kills.

/// Writes a line at once, unbuffered also into a pipe, so that each kill shows as it arrives.
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("flagdemo: \(message)\n".utf8))
    exit(code)
}

let options: DemoOptions
do {
    options = try DemoOptions.parse(
        Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    fail("\(error)\n\n\(DemoOptions.usage)", code: 2)
}
if options.help {
    say(DemoOptions.usage)
    exit(0)
}

var configuration = FlagClient.Configuration(
    server: options.server, set: options.set, sdkKey: options.sdkKey, cacheDirectory: options.cacheDirectory)
if let app = options.app { configuration.app = app }
configuration.logger = { message in
    if message.level >= .warning { FileHandle.standardError.write(Data("flagdemo: \(message)\n".utf8)) }
}
let client: FlagClient
do {
    client = try FlagClient(configuration: configuration)
} catch {
    fail("\(error)", code: 2)
}

// Values are served at once from the cache or the compiled defaults; waiting is for output worth reading.
say("started: \(describe(client.state))")
if await client.ready(timeout: .seconds(5)) {
    say("ready: \(describe(client.state))")
} else {
    say("no fresh set within 5 s: \(describe(client.state))")
}

let checkouts = options.users.map { user in
    let session = client.session(unitID: user, attributes: ["country": "DE", "appVersion": "5.3.0"])
    return UserCheckout(user: user, service: CheckoutService(flags: session))
}
for checkout in checkouts { say("\(checkout.user): \(checkout.service.summary())") }

guard options.watchSeconds > 0 else {
    client.shutdown()
    exit(0)
}
say("watching for kills for \(options.watchSeconds) s\(options.once ? ", until the first" : "")")
let sawKill = await watchForKills(
    client, checkouts: checkouts, seconds: options.watchSeconds, once: options.once, print: say)
client.shutdown()
if options.once && !sawKill {
    fail("no kill within \(options.watchSeconds) s", code: 1)
}
