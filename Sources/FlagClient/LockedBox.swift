#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A value behind a lock, for the hot synchronous paths (a session's frozen values, the current flag set).
///
/// `os_unfair_lock` on Apple platforms and a `pthread_mutex_t` elsewhere, as swift-nio's `NIOLock` does.
/// `Synchronization.Mutex` needs macOS 15 / iOS 18 (the package supports macOS 13 / iOS 16); on Linux it measured no
/// faster here (frozen reads 33–37 ns either way), and ThreadSanitizer cannot see its futex hand-offs, so it
/// reports false races where `pthread_mutex_t` runs clean.
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
        typealias Primitive = pthread_mutex_t
    #endif

    static func make(_ value: Value) -> LockStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        // `create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: LockStorage<Value>.self)
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

    deinit {
        withUnsafeMutablePointerToElements { lock in
            #if !canImport(Darwin)
                pthread_mutex_destroy(lock)
            #endif
            lock.deinitialize(count: 1)
        }
    }

    @inline(__always)
    func withLockedValue<T>(_ body: (inout Value) throws -> T) rethrows -> T {
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
