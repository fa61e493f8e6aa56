import FlagCore
import FlagLock
import FlagTestSupport
import Foundation
import Synchronization
import Testing

@testable import FlagServer

/// The registry tells subscribers on its fan-out queue, off the writer's thread, in order, and never twice.
@Suite("SetRegistry")
struct SetRegistryTests {
    /// Version `version` of the set `name`, with no items.
    private static func state(_ version: Int, of name: String = "ios") -> SetState {
        var set = FlagSet(name: name)
        set.version = version
        return SetState(compiled: CompiledFlagSet(set), items: [:])
    }

    private static func update(_ version: Int, of name: String = "ios") -> SetUpdate {
        SetUpdate(state: state(version, of: name), base: version - 1, changed: [:])
    }

    /// Holds the fan-out queue until `release` is signalled: a version of another set whose one subscriber waits.
    private static func holdFanout(_ registry: SetRegistry, until release: DispatchSemaphore) {
        registry.install(state(1, of: "held"))
        _ = registry.subscribe("held") { _, _ in
            { _ in
                release.wait()
                return true
            }
        }
        registry.publish(update(2, of: "held"))
    }

    /// The versions of the updates a subscriber was told, in order.
    private final class Told: Sendable {
        let versions = Locked<[Int]>([])
        var all: [Int] { versions.withLock { $0 } }
    }

    private static func recording(_ told: Told, staying: Bool = true) -> SetRegistry.Callback {
        { signal in
            if case .update(let update) = signal { told.versions.withLock { $0.append(update.state.version) } }
            return staying
        }
    }

    @Test func aWriterDoesNotWaitForItsFanout() throws {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        _ = registry.subscribe("ios") { _, _ in
            { _ in
                entered.signal()
                release.wait()
                return true
            }
        }
        let published = DispatchSemaphore(value: 0)
        Thread {
            registry.publish(Self.update(2))
            published.signal()
        }.start()
        // The subscriber is stuck in its callback, and the publisher has returned all the same.
        #expect(entered.wait(timeout: .now() + 10) == .success)
        #expect(published.wait(timeout: .now() + 10) == .success, "publish waited for a subscriber")
        #expect(registry.state("ios")?.version == 2)
        release.signal()
        registry.waitForFanout()
    }

    @Test func aSubscriberSeesAVersionEitherInItsFirstLookOrAsASignalNeverBoth() throws {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let release = DispatchSemaphore(value: 0)
        Self.holdFanout(registry, until: release)
        let early = Told()
        _ = registry.subscribe("ios") { state, _ in
            #expect(state.version == 1)
            return Self.recording(early)
        }
        registry.publish(Self.update(2))  // not told yet: the fan-out is held
        #expect(early.all == [])
        let late = Told()
        _ = registry.subscribe("ios") { state, _ in
            #expect(state.version == 2)
            return Self.recording(late)
        }
        release.signal()
        registry.publish(Self.update(3))
        registry.waitForFanout()
        #expect(early.all == [2, 3])
        #expect(late.all == [3])
    }

    /// A store route's versions fan out once it has answered, and so does whatever was made after them meanwhile.
    @Test func aRoutesOwnVersionsFanOutAfterItReturns() {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let signals = Locked<[String]>([])
        _ = registry.subscribe("ios") { _, _ in
            { signal in
                let name =
                    switch signal {
                    case .update(let update): "update \(update.state.version)"
                    case .served: "served"
                    case .heartbeat: "heartbeat"
                    case .shutdown: "shutdown"
                    }
                signals.withLock { $0.append(name) }
                return true
            }
        }
        registry.answeringFirst {
            registry.heartbeat()  // before the route publishes anything: not held
            registry.waitForFanout()
            #expect(signals.withLock { $0 } == ["heartbeat"])
            registry.publish(Self.update(2))
            registry.heartbeat()  // after it: behind the version
            registry.waitForFanout()
            #expect(signals.withLock { $0 } == ["heartbeat"], "told before the route answered")
        }
        registry.publish(Self.update(3))
        registry.waitForFanout()
        #expect(signals.withLock { $0 } == ["heartbeat", "update 2", "heartbeat", "update 3"])
    }

    @Test func signalsArriveInTheOrderTheyWereMade() {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let told = Told()
        _ = registry.subscribe("ios") { _, _ in Self.recording(told) }
        for version in 2...200 { registry.publish(Self.update(version)) }
        registry.waitForFanout()
        #expect(told.all == Array(2...200))
    }

    @Test func aSubscriberThatDeclinesOrUnsubscribesIsToldNothingMore() throws {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let declining = Told()
        _ = registry.subscribe("ios") { _, _ in Self.recording(declining, staying: false) }
        let leaving = Told()
        let id = registry.subscribe("ios") { _, _ in Self.recording(leaving) }
        // Both signals are made before the first is told: the second must still skip the declined subscriber, and
        // neither may reach the one that left before they were told.
        let release = DispatchSemaphore(value: 0)
        Self.holdFanout(registry, until: release)
        registry.publish(Self.update(2))
        registry.publish(Self.update(3))
        registry.unsubscribe("ios", try #require(id))
        release.signal()
        registry.waitForFanout()
        #expect(declining.all == [2])
        #expect(leaving.all == [])
        #expect(registry.subscriberCounts()["ios"] == 0)
    }

    @Test func theFanoutIsCountedWhenItIsDone() {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        for _ in 0..<3 { _ = registry.subscribe("ios") { _, _ in { _ in true } } }
        let counted = Locked<Int?>(nil)
        registry.publish(Self.update(2)) { told in counted.withLock { $0 = told } }
        registry.waitForFanout()
        #expect(counted.withLock { $0 } == 3)
    }

    /// A shutdown during a store route goes out at once, with what the route held, not when the route ends.
    @Test func closingInsideARouteDoesNotWaitForIt() {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let told = Told()
        let shutdowns = Atomic<Int>(0)
        _ = registry.subscribe("ios") { _, _ in
            let record = Self.recording(told)
            return { signal in
                if case .shutdown = signal { shutdowns.add(1, ordering: .relaxed) }
                return record(signal)
            }
        }
        registry.answeringFirst {
            registry.publish(Self.update(2))
            registry.close()
            #expect(told.all == [2])
            #expect(shutdowns.load(ordering: .relaxed) == 1)
        }
    }

    @Test func closingTellsEveryoneBeforeItReturnsAndRefusesNewSubscribers() {
        let registry = SetRegistry()
        registry.install(Self.state(1))
        let shutdowns = Atomic<Int>(0)
        for _ in 0..<5 {
            _ = registry.subscribe("ios") { _, _ in
                { signal in
                    if case .shutdown = signal { shutdowns.add(1, ordering: .relaxed) }
                    return true
                }
            }
        }
        registry.close()
        #expect(shutdowns.load(ordering: .relaxed) == 5)
        #expect(registry.subscribe("ios") { _, _ in { _ in true } } == nil)
    }
}
