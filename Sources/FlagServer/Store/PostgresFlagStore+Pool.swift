import FlagPostgres
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PostgresFlagStore {
    /// The store's connections: at most `limit` lent out at once (a caller beyond that waits for one to come
    /// back), idle ones lent again, and a connection that failed or looks dead closed, so that the next call
    /// connects afresh and a database that comes back is used again without a new store.
    ///
    /// Connections are made on demand, outside the lock, so that a slow or refused connection attempt holds up
    /// no other caller.
    final class Pool: @unchecked Sendable {
        // @unchecked Sendable is safe: `idle` and `lent` are read and written only while `condition` is locked,
        // and a connection is used by one thread at a time: it is in `idle` (touched by nobody), or lent to the
        // one caller that took it until that caller gives it back.
        // A condition, not a `Locked`: a caller beyond the limit sleeps until a connection comes back.
        private let condition = NSCondition()
        private var idle: [PostgresConnection] = []
        private var lent = 0
        let info: PostgresConnectionInfo
        let limit: Int

        init(info: PostgresConnectionInfo, limit: Int) {
            self.info = info
            self.limit = max(1, limit)
        }

        /// Runs `body` on a pooled connection. A connection that is lost (or left in a transaction) is closed,
        /// and when the database could not be reached, every idle one is closed too: they went with it.
        func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
            let connection = try borrow()
            let value: T
            do {
                value = try body(connection)
            } catch let error as PostgresError where error.isUnreachable {
                giveBack(connection, reusable: false)
                closeIdle()
                throw error
            } catch {
                giveBack(connection, reusable: true)
                throw error
            }
            giveBack(connection, reusable: true)
            return value
        }

        /// A new connection outside the pool and its limit, closed when released: for a session-level advisory
        /// lock, which only ending the session releases for certain, held while `body` uses pooled connections.
        func dedicatedConnection() throws -> PostgresConnection {
            try PostgresConnection(info)
        }

        private func borrow() throws -> PostgresConnection {
            condition.lock()
            while lent >= limit {
                condition.wait()
            }
            lent += 1
            condition.unlock()
            while let connection = takeIdle() {
                if Self.isFit(connection) { return connection }
            }
            do {
                return try PostgresConnection(info)
            } catch {
                giveBack(nil, reusable: false)
                throw error
            }
        }

        private func takeIdle() -> PostgresConnection? {
            condition.lock()
            defer { condition.unlock() }
            return idle.popLast()
        }

        private func giveBack(_ connection: PostgresConnection?, reusable: Bool) {
            condition.lock()
            defer { condition.unlock() }
            lent -= 1
            if let connection, reusable, connection.isUsable, connection.isIdle {
                idle.append(connection)
            }
            condition.signal()
        }

        private func closeIdle() {
            condition.lock()
            let closing = idle
            idle = []
            condition.unlock()
            // Released here, outside the lock: closing says goodbye to the server, or tries to.
            withExtendedLifetime(closing) {}
        }

        /// Whether an idle connection can be lent. The server has nothing to say to an idle session that does not
        /// listen but goodbye (a shutdown's or an administrator's FATAL, then the closed socket), so input waiting
        /// on its socket means it is dead; a rare parameter report costs no more than one new connection.
        private static func isFit(_ connection: PostgresConnection) -> Bool {
            guard connection.isUsable else { return false }
            var descriptor = pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0)
            return poll(&descriptor, 1, 0) == 0
        }
    }
}
