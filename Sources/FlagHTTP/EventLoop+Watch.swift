import CSystem
import FlagLock
import Glibc

/// A descriptor of the application's watched by the first event loop: `onReadable` runs on that loop's thread each
/// time the descriptor has input, until `cancel()`. For sockets that other parts of the server must hear from
/// without a thread of their own, such as a database's notification connection.
///
/// The watch is level-triggered: `onReadable` must read what is there (or cancel), or it runs again at once. It runs
/// on a loop thread, so it must not block.
public final class HTTPWatch: Sendable {
    private let loop: EventLoop
    private let token: UInt64
    /// The descriptor watched; the application still owns it and closes it after `cancel()`.
    public let descriptor: Int32

    init(loop: EventLoop, token: UInt64, descriptor: Int32) {
        self.loop = loop
        self.token = token
        self.descriptor = descriptor
    }

    /// Stops watching; `onReadable` does not run again once this returns, except for a call already running on the
    /// loop thread. Calling it again does nothing.
    public func cancel() {
        loop.unwatch(token: token, descriptor: descriptor)
    }
}

extension EventLoop {
    /// The first token of watched descriptors, counting down; connection tokens have generations below it.
    static let firstWatchToken = UInt64.max - 2

    /// Starts watching `descriptor`; throws when the loop's epoll refuses it (not a pollable descriptor, say).
    func watch(_ descriptor: Int32, _ onReadable: @escaping @Sendable () -> Void) throws -> HTTPWatch {
        let token = watches.withLock { watches in
            defer { watches.next -= 1 }
            watches.callbacks[watches.next] = onReadable
            return watches.next
        }
        var event = csystem_epoll_event(CSYSTEM_EPOLLIN, token)
        guard epoll_ctl(epollFD, EPOLL_CTL_ADD, descriptor, &event) == 0 else {
            let code = errno
            _ = watches.withLock { $0.callbacks.removeValue(forKey: token) }
            throw HTTPServerError.watch(descriptor, errno: code)
        }
        return HTTPWatch(loop: self, token: token, descriptor: descriptor)
    }

    func unwatch(token: UInt64, descriptor: Int32) {
        guard watches.withLock({ $0.callbacks.removeValue(forKey: token) }) != nil else { return }
        epoll_ctl(epollFD, EPOLL_CTL_DEL, descriptor, nil)
    }

    /// Runs the callback of a watched descriptor's token; false when the token is not one.
    func runWatch(_ token: UInt64) -> Bool {
        guard token <= Self.firstWatchToken, let callback = watches.withLock({ $0.callbacks[token] }) else {
            return false
        }
        callback()
        return true
    }

    /// The watched descriptors' callbacks by token; registered from any thread, run on the loop's.
    struct Watches {
        var callbacks: [UInt64: @Sendable () -> Void] = [:]
        var next = EventLoop.firstWatchToken
    }
}

extension HTTPServer {
    /// Watches `descriptor` on the first event loop (see `HTTPWatch`); throws unless the server is running.
    public func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Void) throws -> HTTPWatch {
        guard let loop = firstLoop else { throw HTTPServerError.notRunning }
        return try loop.watch(descriptor, onReadable)
    }
}
