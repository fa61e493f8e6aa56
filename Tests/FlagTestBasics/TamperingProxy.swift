import Foundation
import Glibc

/// A man in the middle on 127.0.0.1 and a port of its own: it relays every connection to `upstream` and, in what
/// the server sends back, replaces each occurrence of `find` with `replace` (the same length, so that lengths and
/// chunk sizes still hold), as a compromised cache or an intercepting proxy would. Bytes that could start an
/// occurrence are held back only until the next read tells. With `find` empty it relays what it reads unchanged.
public final class TamperingProxy: @unchecked Sendable {
    // @unchecked Sendable is safe: `listener`, `upstream`, `find` and `replace` never change after init;
    // `replacements` and `silentLeft` are only touched while holding `lock`.
    private let listener: LoopbackListener
    private let upstream: Int
    private let find: [UInt8]
    private let replace: [UInt8]
    private let lock = NSLock()
    private var replacements = 0
    private var silentLeft: Int

    /// A proxy to the server on `upstream` that changes `find` into `replace` (the same number of bytes). Its first
    /// `silentFirst` connections are accepted and held open without a byte relayed either way, as a server too busy
    /// to answer them.
    public init(upstream: Int, find: String = "", replace: String = "", silentFirst: Int = 0) throws {
        self.upstream = upstream
        self.find = Array(find.utf8)
        self.replace = Array(replace.utf8)
        silentLeft = silentFirst
        guard self.find.count == self.replace.count else {
            throw TestClientError(description: "the proxy replaces bytes with as many bytes")
        }
        listener = try LoopbackListener()
        Thread { [self] in acceptLoop() }.start()
    }

    /// The port the proxy listens on.
    public var port: Int { listener.port }

    /// The proxy's base URL.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// How many occurrences were changed so far.
    public var changed: Int {
        lock.lock()
        defer { lock.unlock() }
        return replacements
    }

    /// Stops accepting and ends every relayed connection.
    public func stop() {
        listener.stop()
    }

    deinit { stop() }

    private func acceptLoop() {
        while let client = listener.accept() {
            if takeSilent() {
                guard listener.keep([client]) else { return }
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: upstream)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard server >= 0, connected == 0 else {
                close(client)
                if server >= 0 { close(server) }
                continue
            }
            guard listener.keep([client, server]) else { return }
            let ended = Ended()
            Thread { [self] in relay(from: client, to: server, tamper: false, ended: ended) }.start()
            Thread { [self] in relay(from: server, to: client, tamper: !find.isEmpty, ended: ended) }.start()
        }
    }

    /// Whether the connection just accepted is one of the first, held silent.
    private func takeSilent() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard silentLeft > 0 else { return false }
        silentLeft -= 1
        return true
    }

    /// How many of a connection's two relays have ended; the second closes the descriptors.
    private final class Ended: @unchecked Sendable {
        // @unchecked Sendable is safe: `count` is only touched while holding `lock`.
        private let lock = NSLock()
        private var count = 0

        /// Records one relay's end; `true` for the second.
        func last() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            count += 1
            return count == 2
        }
    }

    /// Copies bytes until either side closes, then shuts both down (the other relay then ends too); the relay that
    /// ends second closes both descriptors, which neither uses any more.
    private func relay(from source: Int32, to destination: Int32, tamper: Bool, ended: Ended) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var pending: [UInt8] = []
        while true {
            let count = read(source, &chunk, chunk.count)
            guard count > 0 else { break }
            pending += chunk[..<count]
            var ready = pending
            if tamper {
                var changes = 0
                (ready, pending, changes) = split(pending)
                if changes > 0 {
                    lock.lock()
                    replacements += changes
                    lock.unlock()
                }
            } else {
                pending = []
            }
            guard sendAll(destination, ready) else { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
        guard ended.last() else { return }
        listener.close([source, destination])
    }

    /// `bytes` with every occurrence replaced, cut where a trailing part could still start an occurrence: what can be
    /// sent, what must wait for more, and how many were replaced.
    private func split(_ bytes: [UInt8]) -> (ready: [UInt8], held: [UInt8], changes: Int) {
        var out: [UInt8] = []
        var changes = 0
        var index = 0
        while index < bytes.count {
            let rest = bytes.count - index
            if rest >= find.count, bytes[index..<(index + find.count)].elementsEqual(find) {
                out += replace
                changes += 1
                index += find.count
            } else if rest < find.count, find.starts(with: bytes[index...]) {
                return (out, Array(bytes[index...]), changes)
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return (out, [], changes)
    }
}
