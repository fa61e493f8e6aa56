#if canImport(Darwin)
    import Darwin
#else
    import Synchronization
#endif

/// A value behind a lock, for the hot synchronous paths (a session's frozen values, the current flag set).
///
/// On Linux this is `Synchronization.Mutex` (a futex: one atomic operation to lock when uncontended). On Apple
/// platforms `Mutex` needs macOS 15 / iOS 18 while the package supports macOS 13 / iOS 16, so it is
/// `os_unfair_lock`, as swift-nio's `NIOLock` does.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable is safe: the value is only reachable inside `withLockedValue`, which holds the lock; on
    // Apple platforms the lock lives in memory allocated once and never moved.
    #if canImport(Darwin)
        private let lock: UnsafeMutablePointer<os_unfair_lock>
        private var value: Value
    #else
        private let mutex: Mutex<Value>
    #endif

    /// A box holding `value`.
    init(_ value: Value) {
        #if canImport(Darwin)
            self.value = value
            lock = .allocate(capacity: 1)
            lock.initialize(to: os_unfair_lock())
        #else
            mutex = Mutex(value)
        #endif
    }

    #if canImport(Darwin)
        deinit {
            lock.deinitialize(count: 1)
            lock.deallocate()
        }
    #endif

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        #if canImport(Darwin)
            os_unfair_lock_lock(lock)
            defer { os_unfair_lock_unlock(lock) }
            return try body(&value)
        #else
            return try mutex.withLock { value in try body(&value) }
        #endif
    }
}
