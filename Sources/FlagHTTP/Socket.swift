import CSystem
import Glibc

/// Thin wrappers over the socket calls the engine makes, each with its error handling in one place.
enum Socket {
    /// A resolved listening address.
    struct Address {
        var storage = sockaddr_storage()
        var length: socklen_t = 0
        var family: Int32 = AF_INET

        /// Parses an IPv4 or IPv6 literal (brackets allowed) or `localhost`, with a port.
        init?(host: String, port: Int) {
            guard (0...65535).contains(port) else { return nil }
            var literal = host == "localhost" ? "127.0.0.1" : host
            if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
            let networkPort = in_port_t(UInt16(port).bigEndian)
            let isIPv6 = literal.contains(":")
            let parsed = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
                if isIPv6 {
                    return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                        address.pointee.sin6_family = sa_family_t(AF_INET6)
                        address.pointee.sin6_port = networkPort
                        return inet_pton(AF_INET6, literal, &address.pointee.sin6_addr) == 1
                    }
                }
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = networkPort
                    return inet_pton(AF_INET, literal, &address.pointee.sin_addr) == 1
                }
            }
            guard parsed else { return nil }
            family = isIPv6 ? AF_INET6 : AF_INET
            length = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        }
    }

    /// A non-blocking listening socket with `SO_REUSEPORT`, so each loop can have its own on the same port.
    static func listen(host: String, port: Int, backlog: Int) throws -> Int32 {
        guard let address = Address(host: host, port: port) else { throw HTTPServerError.invalidAddress(host, port) }
        let fd = csystem_tcp_socket(address.family)
        guard fd >= 0 else { throw HTTPServerError.socket("socket()", host, port, errno: errno) }
        var one: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        var storage = address.storage
        let failure: (String, Int32)? = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                if setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size) != 0 { return ("SO_REUSEADDR", errno) }
                if setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, size) != 0 { return ("SO_REUSEPORT", errno) }
                if bind(fd, socketAddress, address.length) != 0 { return ("bind()", errno) }
                if Glibc.listen(fd, Int32(clamping: backlog)) != 0 { return ("listen()", errno) }
                return nil
            }
        }
        if let (operation, code) = failure {
            close(fd)
            throw HTTPServerError.socket(operation, host, port, errno: code)
        }
        return fd
    }

    /// Fails if something already listens on `port`. `SO_REUSEPORT` would otherwise let a second server join the
    /// port silently and take half of its connections; the probe uses only `SO_REUSEADDR`, so ports in TIME_WAIT
    /// from a previous run still count as free.
    static func ensureAvailable(host: String, port: Int) throws {
        guard port != 0 else { return }
        guard let address = Address(host: host, port: port) else { throw HTTPServerError.invalidAddress(host, port) }
        let fd = csystem_tcp_socket(address.family)
        guard fd >= 0 else { throw HTTPServerError.socket("socket()", host, port, errno: errno) }
        defer { close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var storage = address.storage
        let result = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.length) }
        }
        if result != 0 { throw HTTPServerError.socket("bind()", host, port, errno: errno) }
    }

    /// The local port a socket is bound to.
    static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return portAndHost(storage).port
    }

    /// `host:port` (`[host]:port` for IPv6) of a peer address.
    static func describe(_ storage: sockaddr_storage) -> String {
        let (host, port) = portAndHost(storage)
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func portAndHost(_ storage: sockaddr_storage) -> (host: String, port: Int) {
        var copy = storage
        return withUnsafeBytes(of: &copy) { raw -> (String, Int) in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(storage.ss_family) {
            case AF_INET:
                var address = raw.load(as: sockaddr_in.self)
                inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
                return (cString(text), Int(UInt16(bigEndian: address.sin_port)))
            case AF_INET6:
                var address = raw.load(as: sockaddr_in6.self)
                inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
                return (cString(text), Int(UInt16(bigEndian: address.sin6_port)))
            default:
                return ("unknown", 0)
            }
        }
    }

    private static func cString(_ text: [CChar]) -> String {
        String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Disables Nagle's algorithm: responses go out at once even when smaller than a segment.
    static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Raises the soft open-file limit to the hard limit; 10,000 connections need 10,000 descriptors.
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Monotonic time in nanoseconds, for deadlines.
    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
