import FlagCore
import Foundation

extension FlagClient {
    /// Reads the newest set the app stored in the shared cache, and the overrides it set there, and puts them in use
    /// (a ``CacheAccess/readOnly`` client; a kill in the set applies to open sessions at once). The set follows this
    /// client's ``Configuration/applyNewVersions`` like one from the server: under `.nextLaunch` or `.manual` it
    /// becomes the ``pendingVersion``. A read-only client
    /// does this by itself whenever a session starts; call it where a long-lived screen should catch up without
    /// one, e.g. when a widget's timeline is asked for. Cheap when the app stored nothing since the last look.
    ///
    /// A ``CacheAccess/readWrite`` client does nothing here: it is the cache's writer, so everything in the cache
    /// came from it and is already in use.
    ///
    /// ```swift
    /// client.reload()
    /// let session = client.session(unitID: user.id)
    /// ```
    public func reload() {
        sharedReader?.check(core)
    }

    /// The cache the launch reads: for a read-only client, the app's (opened for reading, `nil` until the app has
    /// written one) and the reader that follows it; else the client's own.
    static func openCacheForLaunch(
        _ configuration: Configuration, verifier: SetVerifier?, now: Date,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> (cache: FlagCache?, reader: SharedCacheReader?) {
        guard configuration.cacheAccess == .readOnly, let directory = configuration.cacheDirectory else {
            return (openCache(configuration, now: now, log: log), nil)
        }
        let reader = SharedCacheReader(directory: directory, setName: configuration.set, verifier: verifier, log: log)
        return (reader.cache, reader)
    }

    /// What the refresh loop starts from. A read-only client keeps the cached set lazy: compiled whole in the
    /// background, it would be published after a newer set the reader may have put in use meanwhile.
    static func refresherStart(_ starting: StartingSet, _ reader: SharedCacheReader?) -> StartingSet {
        guard reader != nil else { return starting }
        var starting = starting
        starting.cached = nil
        starting.cache = nil
        return starting
    }
}
