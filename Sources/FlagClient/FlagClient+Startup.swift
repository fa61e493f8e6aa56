import FlagCore
import FlagSQLite
import Foundation

extension FlagClient {
    /// Opens the cache, or returns `nil` (logged) when there is none configured or it cannot be created.
    static func openCache(
        _ configuration: Configuration, now: Date, log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> FlagCache? {
        guard let directory = configuration.cacheDirectory else { return nil }
        do {
            return try FlagCache.open(directory: directory, now: now, log: log)
        } catch {
            log(.error, "no flag cache: \(error); serving defaults and the network only")
            return nil
        }
    }

    /// The set to start with: the cached document (indexed, decoded per flag on first use), else the bootstrap
    /// document (validated, then cached), else nothing.
    static func loadSet(
        _ configuration: Configuration, cache: FlagCache?, now: Date,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> (
        cache: FlagCache?, cached: FlagCache.Document?, source: (any EvaluationSource)?, state: ClientState,
        model: FlagSet?
    ) {
        var cache = cache
        if let opened = cache {
            do {
                if let document = try opened.document(set: configuration.set) {
                    // The stored ranges spare scanning the JSON; a missing or damaged index is rebuilt by a scan.
                    let stored = document.index.flatMap { DocumentIndex(bytes: document.bytes, encodedIndex: $0) }
                    let index = try stored ?? DocumentIndex(scanning: document.bytes)
                    if index.name == configuration.set, index.version == document.version, index.version >= 1 {
                        return (cache, document, LazySource(index: index), .cached(version: index.version), nil)
                    }
                    log(.warning, "the cached document is not a document of set '\(configuration.set)'; ignored")
                }
            } catch let error as SQLiteError where error.isCorruption {
                do {
                    try opened.rebuild(damaged: opened.database, now: now)
                } catch {
                    log(.error, "no flag cache: the damaged one could not be rebuilt (\(error))")
                    cache = nil
                }
            } catch {
                log(.warning, "could not read the cached document (\(error)); serving defaults until a download")
            }
        }
        if let bootstrap = configuration.bootstrap {
            do {
                let compiled = try Documents.validate(bootstrap, set: configuration.set)
                if let cache {
                    do {
                        try cache.store(
                            set: configuration.set,
                            document: FlagCache.Document(
                                version: compiled.version, etag: nil, bytes: bootstrap,
                                index: try DocumentIndex(scanning: bootstrap).encoded()),
                            now: now)
                    } catch {
                        log(.warning, "could not cache the bootstrap document: \(error)")
                    }
                }
                return (cache, nil, CompiledSource(compiled), .cached(version: compiled.version), compiled.flagSet)
            } catch {
                log(.error, "the bootstrap document is unusable: \(error)")
            }
        }
        return (cache, nil, nil, .defaultsOnly, nil)
    }
}
