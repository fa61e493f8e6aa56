import FlagClient
import Foundation

/// One user's open session and the service reading it.
struct UserCheckout: Sendable {
    let user: String
    let service: CheckoutService
}

/// Prints each kill that reaches the open sessions as it arrives, until `seconds` pass or, with `once`, until the
/// first kill; returns whether `once` was satisfied. Kills in force when it starts are not reported.
func watchForKills(
    _ client: FlagClient, checkouts: [UserCheckout], seconds: Double, once: Bool,
    print: @escaping @Sendable (String) -> Void
) async -> Bool {
    let updates = client.updates
    var inForce: Set<String> = []
    for checkout in checkouts {
        for flag in checkout.service.killedFlags() { inForce.insert("\(checkout.user)/\(flag)") }
    }
    return await withTaskGroup(of: Bool.self) { [inForce] group in
        group.addTask {
            var reported = inForce
            for await update in updates {
                var killed = false
                for checkout in checkouts {
                    for flag in checkout.service.killedFlags()
                    where reported.insert("\(checkout.user)/\(flag)").inserted {
                        let version = update.version.map { "v\($0)" } ?? "no version"
                        print("kill: \(flag) is off for \(checkout.user) (\(version)): \(checkout.service.summary())")
                        killed = true
                    }
                }
                if once && killed { return true }
            }
            return false
        }
        group.addTask {
            // Cancellation only ends the time limit early, which is what cancelling it means.
            try? await Task.sleep(for: .seconds(seconds))
            return false
        }
        let result = await group.next() ?? false
        group.cancelAll()
        return result
    }
}

/// A client state for people: where the values come from.
func describe(_ state: ClientState) -> String {
    switch state {
    case .defaultsOnly: "compiled-in defaults (no flag set yet)"
    case .cached(let version): "flag set v\(version) from the cache"
    case .live(let version): "flag set v\(version), live from the server"
    case .stale(let since): "the last set received; connection lost since \(since)"
    case .refused(let version, let refusal):
        "\(version.map { "flag set v\($0)" } ?? "compiled-in defaults"), an update refused (\(refusal))"
    }
}
