// swift-format-ignore-file: AmbiguousTrailingClosureOverload
// `withTemporaryDirectory` has one name for synchronous and async tests: Swift picks the overload by whether the
// closure awaits.

import Foundation

/// A directory of its own for one test, removed when the test lets go of it, so that no test sees another's files.
public final class TemporaryDirectory: Sendable {
    /// Where the directory is.
    public let url: URL

    /// Creates a new, empty directory under the system's temporary directory.
    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("flagstaff-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // Best effort: a leftover directory under /tmp is harmless and must not fail a test that passed.
        try? FileManager.default.removeItem(at: url)
    }

    /// Writes a text file and returns its name (tests that run a binary in this directory use names as paths).
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    /// Writes raw bytes and returns the file's name.
    @discardableResult
    public func write(_ name: String, _ data: Data) throws -> String {
        try data.write(to: url.appendingPathComponent(name))
        return name
    }
}

/// Runs `body` with a fresh directory of its own, removed afterwards.
public func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = try TemporaryDirectory()
    return try withExtendedLifetime(directory) { try body(directory.url) }
}

/// Runs `body` with a fresh directory of its own, removed afterwards.
public func withTemporaryDirectory<T>(_ body: (URL) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { withExtendedLifetime(directory) {} }
    return try await body(directory.url)
}
