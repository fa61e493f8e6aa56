extension SQLiteDatabase {
    /// Runs `PRAGMA integrity_check` (every page, index and constraint) and returns the problems; empty when sound.
    ///
    /// A file so damaged that the check cannot run reports that failure as its one problem. Takes time in proportion
    /// to the database's size.
    public func integrityCheck(maxProblems: Int = 100) throws -> [String] {
        try check("integrity_check", maxProblems: maxProblems)
    }

    /// Runs `PRAGMA quick_check` (pages and structure, not index contents) and returns the problems; empty when sound.
    public func quickCheck(maxProblems: Int = 100) throws -> [String] {
        try check("quick_check", maxProblems: maxProblems)
    }

    /// SQLite's `PRAGMA data_version` on this connection: it changes when another connection (of this process or
    /// another) commits, and only then, so that a reader can tell cheaply whether anything needs reading again.
    public func dataVersion() throws -> Int {
        try writeWithoutTransaction { db in try db.queryFirst("PRAGMA data_version") { try $0.int(0) } ?? 0 }
    }

    private func check(_ pragma: String, maxProblems: Int) throws -> [String] {
        // Outside a transaction: on a damaged file even the COMMIT of a read transaction can fail.
        try writeWithoutTransaction { db in
            var lines: [String] = []
            do {
                // The pragma may yield problem rows and then fail on the damage it met: keep both.
                _ = try db.query("PRAGMA \(pragma)(\(max(1, maxProblems)))") { lines.append(try $0.text(0)) }
            } catch let error as SQLiteError where error.isCorruption {
                // Handled on purpose: that the check cannot read the file is exactly what it must report.
                lines.append(error.message)
            }
            return lines == ["ok"] ? [] : lines
        }
    }
}
