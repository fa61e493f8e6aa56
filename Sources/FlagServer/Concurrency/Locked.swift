#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a `pthread_mutex_t`: the server's lock for state shared between loop threads, the store queue
/// and timers, used like `Synchronization.Mutex` (`withLock { }`).
///
/// Not `Mutex` itself because on Linux `Mutex` hands a contended lock over inside the kernel (priority-inheritance
/// futexes), where ThreadSanitizer cannot see it: each contended hand-off was reported as a data race between two
/// accesses that both held the lock (four such reports on `HTTPResponder` in one full `--sanitize=thread` run),
/// which would hide a real race among the false ones. ThreadSanitizer intercepts pthread mutexes, and an
/// uncontended lock and unlock cost about what `Mutex`'s do (FlagClient's `LockedBox` notes the same figures).
struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable is safe: the value is only touched inside `withLock`, which holds the mutex; both live in
    // one `LockedStorage` allocation that never moves while a thread waits on the mutex.
    private let storage: LockedStorage<Value>

    /// A lock guarding `value`.
    init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}

/// The value (the buffer's header) and its mutex (the buffer's one element) in a single allocation, so a lock costs
/// one allocation where an inline `Mutex` cost none (a request's exchange and responder each make one).
final class LockedStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    static func make(_ value: Value) -> LockedStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in value }
        // `create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }
        return storage
    }

    // The header (the value) is destroyed by `ManagedBuffer` itself; the element is ours to destroy.
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            _ = mutex.deinitialize(count: 1)
        }
    }
}
