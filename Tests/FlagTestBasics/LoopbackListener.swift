import Foundation
import Glibc

/// A listening socket on 127.0.0.1 and a free port, and the connections a test server or proxy accepted on it, which
/// `stop()` ends. A descriptor leaves the list in the same step that closes it (`close(_:)`), and the listener is
/// closed by the accept loop as it ends, not by `stop()`: closed anywhere else, a number could be given to another
/// test's socket before it is shut down here.
public final class LoopbackListener: @unchecked Sendable {
    // @unchecked Sendable is safe: `socket` and `port` never change after init; `open` and `stopped` are only
    // touched while holding `lock`.
    public let port: Int
    private let socket: Int32
    private let lock = NSLock()
    private var open: [Int32] = []
    private var stopped = false

    /// Listens on a free port.
    public init() throws {
        (socket, port) = try listenOnLoopback()
    }

    /// The next connection, or nil once the listener is shut down, when it is closed: for the accept loop alone.
    public func accept() -> Int32? {
        let fd = Glibc.accept(socket, nil, nil)
        guard fd >= 0 else {
            Glibc.close(socket)
            return nil
        }
        return fd
    }

    /// Adds `fds`, the descriptors of one accepted connection, to those `stop()` ends; once stopped, closes them
    /// instead and answers false.
    public func keep(_ fds: [Int32]) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else {
            for fd in fds { Glibc.close(fd) }
            return false
        }
        open += fds
        return true
    }

    /// Closes `fds`, which leave the list in the same step.
    public func close(_ fds: [Int32]) {
        lock.lock()
        defer { lock.unlock() }
        open.removeAll { fds.contains($0) }
        for fd in fds { Glibc.close(fd) }
    }

    /// Stops accepting and ends every kept connection. Only the first call acts.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        shutdown(socket, Int32(SHUT_RDWR))
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
    }
}
