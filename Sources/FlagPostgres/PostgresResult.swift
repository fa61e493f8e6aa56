#if Postgres
    import CPostgres
    import Foundation

    /// The rows a statement returned, in libpq's text format; freed when released.
    public final class PostgresResult {
        private let handle: OpaquePointer

        init(_ handle: OpaquePointer) {
            self.handle = handle
        }

        deinit {
            PQclear(handle)
        }

        /// How many rows there are.
        public var count: Int { Int(PQntuples(handle)) }

        /// How many rows an `INSERT`, `UPDATE` or `DELETE` touched.
        public var affectedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

        /// Row `index`.
        public subscript(index: Int) -> PostgresRow { PostgresRow(result: self, row: Int32(index)) }

        func value(_ row: Int32, _ column: Int) throws -> UnsafeBufferPointer<UInt8>? {
            let column = Int32(column)
            guard column < PQnfields(handle) else {
                throw PostgresError.statement("the result has no column \(column)", sqlState: nil)
            }
            if PQgetisnull(handle, row, column) == 1 { return nil }
            let length = Int(PQgetlength(handle, row, column))
            return PQgetvalue(handle, row, column).withMemoryRebound(to: UInt8.self, capacity: length) {
                UnsafeBufferPointer(start: $0, count: length)
            }
        }
    }
#endif
