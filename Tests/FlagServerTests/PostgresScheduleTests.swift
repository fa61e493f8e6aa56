import FlagCore
import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension PostgresTests {
    /// Scheduled changes across flagserver processes on one PostgreSQL database (docs/reviews.md): each applied once,
    /// and not before its time, while a replica is killed, and by a server that starts after the time. How late they
    /// come is a speed figure, measured by `Benchmarks/schedule.py --replicas 3` (BENCHMARKS.md): a machine that
    /// stalls a login for seconds makes them late without anything being wrong. That a due change applies at the
    /// next pass is tested on the harness's clock, in `ScheduledChangeTests`.
    @Suite("Scheduled changes on replicas", .enabled(if: ServerProcess.binary != nil), .live)
    struct ScheduleReplicaTests {
        static let set = "/v1/admin/sets/ios-prod"

        /// The next whole second at least `seconds` from now, as the server's clock (this machine's) reads it.
        static func wholeSecond(after seconds: Double) -> Date {
            Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + seconds).rounded(.up))
        }

        /// Proposes flag `key` through replica `index`, scheduled at `at`; the change request's id.
        static func schedule(_ replicas: Replicas, _ index: Int, _ key: String, at: Date) throws -> Int {
            let response = try replicas.send(
                index, "PUT", "\(set)/flags/\(key)?propose=Add+\(key)&at=\(ISO8601.format(at))",
                body: #"{"flag":{"type":"bool","kind":"ops","default":true}}"#)
            guard response.status == 202, case .int(let id)? = try response.json("changeRequest") else {
                throw TestClientError(description: "proposing \(key): \(response.status) \(response.text)")
            }
            return Int(id)
        }

        @Test func twentyChangesDueTheSameSecondApplyOnceEachWhileAReplicaIsKilled() throws {
            let replicas = try Replicas(count: 3)
            let before = try #require(try replicas.send(0, "GET", "\(Self.set)/flags").json("version"))
            // Twenty proposals through three replicas must all be made before the time, even on a slow machine.
            let at = Self.wholeSecond(after: 10)
            let ids = try (0..<20).map { try Self.schedule(replicas, $0 % 3, "scheduled-\($0)", at: at) }
            Thread.sleep(forTimeInterval: max(0, at.timeIntervalSinceNow))
            replicas[2].stop(signal: SIGKILL)
            let applied = waitUntil(every: .milliseconds(50)) {
                ids.allSatisfy { id in
                    (try? replicas.send(0, "GET", "\(Self.set)/changes/\(id)").json("change.state"))
                        == .string("applied")
                }
            }
            #expect(applied, "not every scheduled change applied")

            var versions: Set<Int64> = []
            for id in ids {
                let change = try replicas.send(1, "GET", "\(Self.set)/changes/\(id)")
                guard case .int(let version)? = try change.json("change.appliedVersion"),
                    case .string(let decided)? = try change.json("change.decidedAt")
                else {
                    Issue.record("change \(id) has no applied version: \(change.text)")
                    continue
                }
                versions.insert(version)
                // `at` is a whole second, and so is `decidedAt`.
                #expect(try ISO8601.date(from: decided) >= at, "change \(id) applied at \(decided), before its time")
            }
            #expect(versions.count == 20, "each change is its own version")
            guard case .int(let first) = before else { return }
            let now = try replicas.send(1, "GET", "\(Self.set)/flags").json("version")
            #expect(now == .int(first + 20), "exactly twenty versions were written")
            let audit = try replicas.send(1, "GET", "\(Self.set)/audit?limit=100").text
            #expect(audit.components(separatedBy: "\"change.apply\"").count - 1 == 20)
        }

        @Test func aServerStartedAfterAChangesTimeAppliesItAtStartAndSaysHowLate() throws {
            let replicas = try Replicas(count: 1)
            let at = Self.wholeSecond(after: 5)
            let id = try Self.schedule(replicas, 0, "late-flag", at: at)
            replicas[0].stop(signal: SIGKILL)
            Thread.sleep(forTimeInterval: max(0, at.timeIntervalSinceNow) + 2)
            _ = try replicas.add()
            let applied = waitUntil(every: .milliseconds(50)) {
                (try? replicas.send(1, "GET", "\(Self.set)/changes/\(id)").json("change.state")) == .string("applied")
            }
            #expect(applied)
            let reason = try replicas.send(1, "GET", "\(Self.set)/audit?limit=1").json("records[0].reason")
            #expect(reason?.text?.contains("s late (the server was not running at that time)") == true, "\(reason)")
        }
    }
}
