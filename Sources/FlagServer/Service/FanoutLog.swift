import FlagLock
import Foundation

/// One version's fan-out on this server: when it was committed, how many subscribers were told, and how long
/// telling them took.
struct FanoutRecord: Sendable, Hashable {
    let committedAt: Date
    let streams: Int
    let milliseconds: Double
}

/// The fan-out of each set's last `FanoutLog.kept` versions on this server.
final class FanoutLog: Sendable {
    static let kept = 64
    private let log = Locked([String: [Int: FanoutRecord]]())

    func record(set: String, version: Int, _ fanout: FanoutRecord) {
        log.withLock { log in
            log[set, default: [:]][version] = fanout
            if let versions = log[set], versions.count > Self.kept, let oldest = versions.keys.min() {
                log[set]?[oldest] = nil
            }
        }
    }

    func fanout(set: String, version: Int) -> FanoutRecord? {
        log.withLock { $0[set]?[version] }
    }
}
