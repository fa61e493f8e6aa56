import Dispatch
import FlagLock
import Testing

@Suite("Locked: the one lock")
struct LockedTests {
    /// Many threads contend for one lock; every increment survives. Under `--sanitize=thread` this is also the
    /// check that ThreadSanitizer sees the hand-offs (it reported `Synchronization.Mutex`'s as races).
    @Test func contendedIncrementsAllSurvive() {
        let counter = Locked<[Int]>([0, 0])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<5_000 {
                counter.withLock { $0[worker % 2] += 1 }
            }
        }
        #expect(counter.withLock { $0 } == [20_000, 20_000])
    }

    @Test func theValueIsReleasedWithTheLock() {
        final class Tracked: Sendable {}
        weak var tracked: Tracked?
        do {
            let object = Tracked()
            tracked = object
            let lock = Locked<Tracked?>(object)
            #expect(lock.withLock { $0 } === object)
        }
        #expect(tracked == nil)
    }
}
