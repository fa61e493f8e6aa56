import CSystem
import Glibc

/// Bytes waiting to be written to one connection, as a list of chunks shared without copying.
struct OutputQueue {
    private var chunks: [[UInt8]] = []
    private var offset = 0
    /// Total bytes not yet written.
    private(set) var byteCount = 0

    var isEmpty: Bool { byteCount == 0 }

    mutating func append(_ chunk: [UInt8]) {
        guard !chunk.isEmpty else { return }
        chunks.append(chunk)
        byteCount += chunk.count
    }

    mutating func append(contentsOf newChunks: [[UInt8]]) {
        for chunk in newChunks { append(chunk) }
    }

    mutating func removeAll() {
        chunks = []
        offset = 0
        byteCount = 0
    }

    /// Writes as much as the socket takes in one `sendmsg` (up to `capacity` chunks, gathered with an iovec array).
    /// Returns the bytes written, or -1 with `errno` set.
    mutating func send(to fd: Int32, iovecs: UnsafeMutablePointer<iovec>, capacity: Int) -> Int {
        let count = min(chunks.count, capacity)
        // One chunk (a 304's head) or two (a head and its body) are the usual cases: filled directly, without the
        // recursion of `gather`.
        let written: Int
        switch count {
        case 1:
            written = chunks[0].withUnsafeBytes { first in
                iovecs[0] = Self.iovecOf(first, from: offset)
                return Self.sendGathered(fd, iovecs, count)
            }
        case 2:
            written = chunks[0].withUnsafeBytes { first in
                chunks[1].withUnsafeBytes { second in
                    iovecs[0] = Self.iovecOf(first, from: offset)
                    iovecs[1] = Self.iovecOf(second, from: 0)
                    return Self.sendGathered(fd, iovecs, count)
                }
            }
        default:
            written = gather(0, count: count, iovecs: iovecs) { Self.sendGathered(fd, iovecs, count) }
        }
        if written > 0 { consume(written) }
        return written
    }

    /// One `sendmsg` of the first `count` iovecs, without blocking or raising `SIGPIPE`.
    private static func sendGathered(_ fd: Int32, _ iovecs: UnsafeMutablePointer<iovec>, _ count: Int) -> Int {
        var message = msghdr()
        message.msg_iov = iovecs
        message.msg_iovlen = count
        return Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }

    @inline(__always)
    private static func iovecOf(_ raw: UnsafeRawBufferPointer, from start: Int) -> iovec {
        iovec(
            iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress.map { $0 + start }), iov_len: raw.count - start)
    }

    /// Fills `iovecs[index...]` inside nested `withUnsafeBytes` scopes, so each pointer stays valid for the call.
    private func gather(
        _ index: Int, count: Int, iovecs: UnsafeMutablePointer<iovec>, _ body: () -> Int
    ) -> Int {
        guard index < count else { return body() }
        return chunks[index].withUnsafeBytes { raw in
            iovecs[index] = Self.iovecOf(raw, from: index == 0 ? offset : 0)
            return gather(index + 1, count: count, iovecs: iovecs, body)
        }
    }

    /// The bytes not yet written, in order: what a test's stand-in for the socket takes.
    var unwritten: [UInt8] {
        var bytes = chunks.flatMap { $0 }
        bytes.removeFirst(offset)
        return bytes
    }

    /// Drops the first `written` bytes, which the socket took.
    mutating func consume(_ written: Int) {
        byteCount -= written
        var remaining = written
        var removed = 0
        while remaining > 0 {
            let available = chunks[removed].count - offset
            if remaining >= available {
                remaining -= available
                offset = 0
                removed += 1
            } else {
                offset += remaining
                remaining = 0
            }
        }
        if removed == chunks.count {
            // Drained: a small array is kept for the next response (one allocation less per request on a
            // keep-alive connection); a large one is released so idle connections hold little.
            if chunks.capacity <= 4 {
                chunks.emptyKeepingCapacity()
            } else {
                chunks = []
            }
        } else if removed > 0 {
            chunks.removeFirst(removed)
        }
    }
}

extension Array {
    /// `removeAll(keepingCapacity: true)` for the per-request paths: that one goes through the generic
    /// `replaceSubrange`, hundreds of instructions even for a two-element array in the serving profile; `popLast` is a
    /// count decrement and the element's release.
    @inline(__always)
    mutating func emptyKeepingCapacity() {
        while popLast() != nil {}
    }

    /// `removeFirst()` without the generic `replaceSubrange` when the array holds one element (the usual case of a
    /// connection's outstanding requests).
    @inline(__always)
    mutating func removeFirstQuickly() {
        if count == 1 {
            removeLast()
        } else {
            removeFirst()
        }
    }
}
