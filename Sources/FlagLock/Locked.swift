#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a lock: the one lock every Flagstaff module uses for state shared between threads.
///
/// ```swift
/// let hits = Locked(0)
/// hits.withLock { $0 += 1 }
/// ```
///
/// The policy, in one place:
/// - **The platform's blocking mutex**: `pthread_mutex_t` on Linux, `os_unfair_lock` on Apple platforms (as
///   swift-nio's `NIOLock`). A waiter sleeps in the kernel instead of spinning, so a long critical section (the
///   server's set registry is held while a patch is written to every open stream) costs the waiters nothing, and
///   the same lock serves the client's short ones (a session's frozen values, the set in use).
/// - **Not `Synchronization.Mutex`**: it needs macOS 15 / iOS 18 and the package supports macOS 13 / iOS 16; and on
///   Linux it hands a contended lock over inside the kernel (priority-inheritance futexes), where ThreadSanitizer
///   cannot see it, so each contended hand-off was reported as a race between two accesses that both held the lock.
///   ThreadSanitizer intercepts `pthread_mutex_t` and `os_unfair_lock`: a race it reports here is a real one.
/// - **Not a spin lock**: a spinning waiter takes a core from the holder it waits for (this machine has two), and
///   a holder that is preempted or writes to sockets keeps every waiter spinning.
///
/// The value and the lock share one allocation (`LockedStorage`), which never moves while a thread waits on it.
/// Copies of a `Locked` share that storage. Guard a value, not `Void`: an empty value sits at the lock's own address,
/// and ThreadSanitizer then reports the lock's reads of itself as races with the value.
///
/// Public rather than `package`, and `@inlinable`: this toolchain did not inline an `@inlinable package` function
/// into other modules, and every lock (and every new one: a session makes one) was then a generic call.
public struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable is safe: the value is only touched inside `withLock`, which holds the lock, and the value
    // and the lock live in one `LockedStorage` that all copies share.
    @usableFromInline let storage: LockedStorage<Value>

    /// A lock guarding `value`.
    @inlinable
    public init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

/// The value (the buffer's header) and its lock (the buffer's one element) in a single allocation.
public final class LockedStorage<Value>: ManagedBuffer<Value, LockedStorage<Value>.Primitive> {
    #if canImport(Darwin)
        public typealias Primitive = os_unfair_lock
    #else
        public typealias Primitive = pthread_mutex_t
    #endif

    @inlinable
    static func make(_ value: Value) -> LockedStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        // `create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { lock in
            #if canImport(Darwin)
                lock.initialize(to: os_unfair_lock())
            #else
                lock.initialize(to: pthread_mutex_t())
                pthread_mutex_init(lock, nil)
            #endif
        }
        return storage
    }

    // The header (the value) is destroyed by `ManagedBuffer` itself; the element is ours to destroy.
    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if !canImport(Darwin)
                pthread_mutex_destroy(lock)
            #endif
            _ = lock.deinitialize(count: 1)
        }
    }

    @inlinable @inline(__always)
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { value, lock in
            #if canImport(Darwin)
                os_unfair_lock_lock(lock)
                defer { os_unfair_lock_unlock(lock) }
            #else
                pthread_mutex_lock(lock)
                defer { pthread_mutex_unlock(lock) }
            #endif
            return try body(&value.pointee)
        }
    }
}
