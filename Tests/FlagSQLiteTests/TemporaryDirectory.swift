import Foundation

/// Runs `body` with a fresh directory of its own, removed afterwards, so that no test sees another's files.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("FlagSQLiteTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// An error a test throws on purpose from inside a transaction.
struct PlannedFailure: Error, Equatable {}
