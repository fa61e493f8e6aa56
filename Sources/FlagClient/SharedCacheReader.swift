import FlagCore
import FlagLock
import FlagSQLite
import Foundation

/// A read-only client's view of the cache the app writes (``FlagClient/CacheAccess/readOnly``): it opens the cache
/// once the app has written one, notices when the app commits (SQLite's `data_version`) or replaces the file, and
/// then puts a newer stored set and the app's overrides in use. Nothing here writes.
final class SharedCacheReader: Sendable {
    private struct State {
        var cache: FlagCache?
        /// The file the open cache was opened on.
        var file: FileIdentity?
        /// `data_version` when the cache was last read; `nil` forces a read.
        var dataVersion: Int?
        /// The last problem logged, so that one that repeats at every session is logged once.
        var problem: String?
        /// When opening failed last: a damaged or half-created file is tried again a second later, not at every
        /// session (real time, as SQLite's busy timeout is).
        var failedAt: ContinuousClock.Instant?
        /// After `FlagClient.shutdown`: the cache stays closed.
        var isClosed = false
    }

    let directory: URL
    let setName: String
    let verifier: SetVerifier?
    private let path: String
    private let log: @Sendable (FlagClientLogMessage.Level, String) -> Void
    /// Held through each check's I/O: a session started meanwhile waits for the set the check is reading.
    private let state: Locked<State>

    /// Opens the cache in `directory` if there is one to read (logged when it cannot be read), and records its
    /// `data_version` before the launch reads it, so that a commit made in between is read at the first check.
    init(
        directory: URL, setName: String, verifier: SetVerifier?,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) {
        self.directory = directory
        self.setName = setName
        self.verifier = verifier
        self.path = directory.appendingPathComponent(FlagCache.fileName).path
        self.log = log
        var state = State()
        Self.open(&state, directory: directory, path: path, log: log)
        if let cache = state.cache {
            do {
                state.dataVersion = try cache.database.dataVersion()
            } catch {
                log(.warning, "could not read the shared flag cache: \(error)")
            }
        }
        self.state = Locked(state)
    }

    /// The cache as opened now, for the launch and for persisted sessions.
    var cache: FlagCache? { state.withLock { $0.cache } }

    /// The cheap check a new session and `reload()` make: when the app replaced the cache file or committed since
    /// the last look, reads the stored set and puts it in use if it is newer than the one in use (lazily, as the
    /// launch does; a kill in it applies to open sessions), and reads the app's overrides again.
    func check(_ core: ClientCore) {
        state.withLock { state in
            if state.isClosed { return }
            if state.cache == nil, let failedAt = state.failedAt, ContinuousClock.now - failedAt < .seconds(1) {
                return
            }
            if state.cache == nil || FileIdentity(path: path) != state.file {
                if state.cache != nil {
                    log(.info, "the shared flag cache at \(path) was replaced; opening it again")
                    state.cache?.close()
                    state.cache = nil
                    state.dataVersion = nil
                }
                Self.open(&state, directory: directory, path: path, log: log)
            }
            guard let cache = state.cache else { return }
            do {
                let version = try cache.database.dataVersion()
                guard version != state.dataVersion else { return }
                // Recorded before reading: a set that cannot be used is not read again until the app commits again.
                state.dataVersion = version
                try read(cache, core)
                state.problem = nil
            } catch {
                let problem = "could not read the shared flag cache (\(error)); serving the set in use"
                if problem != state.problem { log(.warning, problem) }
                state.problem = problem
            }
        }
    }

    /// Closes the cache for good (`FlagClient.shutdown`): sessions started later serve the set in use.
    func close() {
        state.withLock { state in
            state.cache?.close()
            state.cache = nil
            state.isClosed = true
        }
    }

    /// Reads what the app stored: the set, when newer than the one in use, and the overrides.
    private func read(_ cache: FlagCache, _ core: ClientCore) throws {
        // Read before the set: a set read second could only be newer, and an override is never older than its set.
        if let overrides = core.overrides { overrides.replaceStoredOverrides(try cache.overrides(set: setName)) }
        // With `refresh` set explicitly, a live client is as fresh as the app: the server feeds both.
        if case .live = core.state { return }
        guard let stored = try cache.stored(set: setName), stored.version > core.source?.version ?? 0 else { return }
        guard
            let (index, patches) = try FlagClient.readCached(stored, set: setName, verifier: verifier, log: log)
        else { return }
        let source = LazySource(index: index, patches: patches).withKills()
        guard source.version > core.source?.version ?? 0 else { return }
        log(.debug, "the app stored set '\(setName)' v\(source.version); in use from now on")
        core.publish(source: source, state: .cached(version: source.version))
    }

    private static func open(
        _ state: inout State, directory: URL, path: String,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) {
        do {
            // Identity first: a file replaced between the two is then reopened at the next check, not missed.
            let file = FileIdentity(path: path)
            state.cache = try FlagCache.openReadOnly(directory: directory, log: log)
            state.file = state.cache == nil ? nil : file
            state.problem = nil
            state.failedAt = nil
        } catch {
            state.failedAt = ContinuousClock.now
            let problem = "the shared flag cache at \(path) cannot be read (\(error)); waiting for the app to write one"
            if problem != state.problem { log(.warning, problem) }
            state.problem = problem
        }
    }
}
