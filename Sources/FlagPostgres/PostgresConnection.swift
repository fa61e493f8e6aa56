#if Postgres
    import CPostgres
    import Foundation

    /// One connection to PostgreSQL through libpq: statements with parameters, transactions, and `LISTEN`'s
    /// notifications.
    ///
    /// A connection is not thread-safe: one thread uses it at a time (the store's pool lends it out under a lock).
    /// Every call blocks until the server answers.
    /// ```swift
    /// let db = try PostgresConnection(PostgresConnectionInfo("postgresql://localhost/flagstaff"))
    /// let names = try db.query("SELECT name FROM flag_set WHERE current_version > $1", [.int(3)]) { try $0.text(0) }
    /// ```
    public final class PostgresConnection {
        private let handle: OpaquePointer
        /// Where the connection goes, without the password.
        public let info: PostgresConnectionInfo

        /// Whether this build can connect: it was made with the `Postgres` trait, and links libpq.
        public static let isAvailable = true

        /// Connects, or throws `unreachable` (no answer: try again later) or `refused` (credentials, database,
        /// connection string: waiting will not help).
        public init(_ info: PostgresConnectionInfo) throws {
            self.info = info
            let started = ContinuousClock.now
            let handle = info.withParameters { keywords, values in PQconnectdbParams(keywords, values, 1) }
            guard let handle else {
                throw PostgresError.unreachable("libpq could not allocate a connection to \(info.redacted)")
            }
            guard PQstatus(handle) == CONNECTION_OK else {
                let message = Self.message(PQerrorMessage(handle))
                PQfinish(handle)
                throw Self.connectionFailure(message, info, took: ContinuousClock.now - started)
            }
            self.handle = handle
        }

        deinit {
            PQfinish(handle)
        }

        /// Whether the connection is still up, as far as libpq knows (a lost one is noticed by the next call).
        public var isUsable: Bool { PQstatus(handle) == CONNECTION_OK }

        /// Whether the connection is outside any transaction and ready for the next statement: not inside one
        /// (a `ROLLBACK` that failed), nor busy with one, so that a pool can lend it again.
        public var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

        /// The descriptor of the connection's socket, for `poll` while waiting for notifications.
        public var socket: Int32 { PQsocket(handle) }

        /// The server's process id for this connection.
        public var backendPID: Int32 { PQbackendPID(handle) }

        /// Runs one statement (no `;`-separated lists when there are parameters) with `parameters` bound to `$1`,
        /// `$2`, …; returns its rows, if any.
        @discardableResult
        public func execute(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
            let result: OpaquePointer?
            if parameters.isEmpty {
                result = PQexec(handle, sql)
            } else {
                result = Self.withBound(parameters) { types, values, lengths, formats in
                    PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 0)
                }
            }
            guard let result else {
                throw failure()
            }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                return PostgresResult(result)
            default:
                let message = Self.message(PQresultErrorMessage(result))
                let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
                PQclear(result)
                if !isUsable {
                    throw PostgresError.unreachable("the connection to \(info.redacted) was lost: \(message)")
                }
                throw PostgresError.statement(message, sqlState: state)
            }
        }

        /// Reads whatever the server has sent, without blocking; throws `unreachable` when the connection is lost.
        /// Call when `socket` is readable, then take `nextNotification()` until it returns `nil`.
        public func consumeInput() throws {
            guard PQconsumeInput(handle) == 1 else { throw failure() }
        }

        /// The next notification of a channel this connection `LISTEN`s on, if one has arrived.
        public func nextNotification() -> PostgresNotification? {
            guard let notify = PQnotifies(handle) else { return nil }
            defer { PQfreemem(notify) }
            return PostgresNotification(
                channel: String(cString: notify.pointee.relname), payload: String(cString: notify.pointee.extra),
                senderPID: notify.pointee.be_pid)
        }

        /// The error of a call that returned nothing: the connection is lost, or libpq ran out of memory.
        private func failure() -> PostgresError {
            let message = Self.message(PQerrorMessage(handle))
            return PostgresError.unreachable("the connection to \(info.redacted) failed: \(message)")
        }

        /// Classifies a failed connection attempt. One that ran out its `connect_timeout` had no answer in time,
        /// and is `unreachable` whatever a later ping says: a server too busy to finish a login may answer a ping a
        /// moment after. Otherwise the server is asked whether it accepts connections at all: one that does (so
        /// refused this one), or a string libpq will not even try, is `refused`; no answer, or a server starting or
        /// shutting down, is `unreachable`.
        private static func connectionFailure(
            _ message: String, _ info: PostgresConnectionInfo, took elapsed: Duration
        ) -> PostgresError {
            let text = "cannot connect to \(info.redacted): \(message)"
            // libpq counts its timeout in whole seconds of the wall clock, so it may give up up to a second early.
            if let timeout = info.connectTimeout, elapsed >= timeout - .seconds(1) { return .unreachable(text) }
            let ping = info.withParameters { keywords, values in PQpingParams(keywords, values, 1) }
            switch ping {
            case PQPING_OK, PQPING_NO_ATTEMPT: return .refused(text)
            default: return .unreachable(text)
            }
        }

        /// One line of libpq's text: trimmed, with its lines joined.
        static func message(_ text: UnsafePointer<CChar>?) -> String {
            guard let text else { return "no message" }
            let lines = String(cString: text).split(whereSeparator: \.isNewline)
            return lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
        }

        /// Binds parameters as libpq wants them: text for all but bytes, which go as binary `bytea`.
        private static func withBound<T>(
            _ parameters: [PostgresValue],
            _ body: (
                UnsafePointer<Oid>, UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>
            ) -> T
        ) -> T {
            var types: [Oid] = []
            var buffers: [UnsafeMutableRawPointer?] = []
            var lengths: [Int32] = []
            var formats: [Int32] = []
            for parameter in parameters {
                let (type, format, bytes): (Oid, Int32, [UInt8]?) =
                    switch parameter {
                    case .null: (0, 0, nil)
                    case .text(let text): (0, 0, Array(text.utf8) + [0])
                    case .int(let value): (20, 0, Array(String(value).utf8) + [0])
                    case .bytes(let data): (17, 1, data)
                    }
                types.append(type)
                formats.append(format)
                guard let bytes else {
                    buffers.append(nil)
                    lengths.append(0)
                    continue
                }
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
                bytes.withUnsafeBytes { source in
                    if let base = source.baseAddress { buffer.copyMemory(from: base, byteCount: source.count) }
                }
                buffers.append(buffer)
                lengths.append(Int32(bytes.count))
            }
            defer {
                for buffer in buffers { buffer?.deallocate() }
            }
            let values = buffers.map { $0.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) } }
            return types.withUnsafeBufferPointer { types in
                values.withUnsafeBufferPointer { values in
                    lengths.withUnsafeBufferPointer { lengths in
                        formats.withUnsafeBufferPointer { formats in
                            body(types.baseAddress!, values.baseAddress!, lengths.baseAddress!, formats.baseAddress!)
                        }
                    }
                }
            }
        }
    }
#endif
