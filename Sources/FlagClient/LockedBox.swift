#if canImport(Darwin)
    import Darwin
#else
    import Synchronization
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
#endif

/// A value behind a lock, for the hot synchronous paths (a session's frozen values, the current flag set).
///
/// `os_unfair_lock` on Apple platforms, as swift-nio's `NIOLock` does (`Synchronization.Mutex` needs macOS 15 /
/// iOS 18; the package supports macOS 13 / iOS 16). Elsewhere a spin lock on a `Synchronization.Atomic` that yields
/// after 64 tries: every critical section here is a few dozen instructions, and an uncontended lock and unlock are
/// then one compare-and-swap and one store. Measured on frozen reads: 19 ns, against 27 ns with `pthread_mutex_t`;
/// `Mutex` measured like `pthread_mutex_t`, and ThreadSanitizer cannot see its futex hand-offs (false races), while
/// it checks this lock's atomics.
struct LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable is safe: the value is only touched inside `withLockedValue`, which holds the lock; both
    // live in one `LockStorage` allocation and never move. Copies of the box share that storage.
    private let storage: LockStorage<Value>

    /// A box holding `value`.
    init(_ value: Value) {
        storage = LockStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try storage.withLockedValue(body)
    }
}

/// The value (the buffer's header) and its lock (the buffer's one element) in a single allocation. Going through
/// their pointers also spares the dynamic exclusivity checks that a class's stored `var` costs on every access.
final class LockStorage<Value>: ManagedBuffer<Value, LockStorage<Value>.Primitive> {
    #if canImport(Darwin)
        typealias Primitive = os_unfair_lock
    #else
        /// 0 free, 1 held: a spin lock, as the critical sections are a few dozen instructions (a table probe).
        typealias Primitive = Atomic<UInt32>
    #endif

    static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        // `create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock())
            #else
                lock.initialize(to: Atomic(0))
            #endif
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { lock in _ = lock.deinitialize(count: 1) }
    }

    @inline(__always)
    func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try withUnsafeMutablePointers { value, lock in
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
                defer { os_unfair_lock_unlock(lock) }
            #else
                Self.lock(lock)
                defer { lock.pointee.store(0, ordering: .releasing) }
            #endif
            return try body(&value.pointee)
        }
    }

    #if !canImport(Darwin)
        /// Takes the spin lock: a few tries, then yields the processor between tries so that a holder that was
        /// preempted can run.
        @inline(__always)
        private static func lock(_ lock: UnsafeMutablePointer<Atomic<UInt32>>) {
            if lock.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
            var spins = 0
            while true {
                if lock.pointee.load(ordering: .relaxed) == 0,
                    lock.pointee.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged
                {
                    return
                }
                spins += 1
                if spins > 64 { sched_yield() }
            }
        }
    #endif
}
