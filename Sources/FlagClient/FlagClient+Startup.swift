import FlagCore
import FlagSQLite
import Foundation

/// The set a client starts with, and what the refresh loop carries on from.
struct StartingSet {
    var cache: FlagCache?
    /// The cached document and the patches applied since, when they are the set in use: decoded whole in the
    /// background.
    var cached: (document: FlagCache.Document, patches: [SetPatch])?
    var source: (any EvaluationSource)?
    var state: ClientState
    /// The bootstrap document's set, when it is the set in use.
    var model: FlagSet?
    /// With trusted keys: the lowest version accepted from now on, the verified bootstrap document's (0 without one).
    var floor = 0
    /// With trusted keys: the signed bytes of the newest set cached (the one the refresh loop carries on from).
    var signed: FlagCache.Stored?
    /// Under `.manual`, when the launch starts from the activated version set aside: the newest set cached, which
    /// waits for `activate()` (its kills known, so that they apply at once).
    var pending: LazySource?
    /// The activated version set aside, when it is the set in use: decoded whole in the background too.
    var activated: (document: FlagCache.Document, patches: [SetPatch])?
}

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

    /// The set to start with: the cached document and patches (indexed, decoded per flag on first use), else the
    /// bootstrap document (validated, then cached), else nothing. With a verifier, each must verify: a cache that
    /// does not is moved aside (one that is merely unsigned, or signed by a key no longer trusted, is left for the
    /// next download to replace), a bootstrap document that does not is not used, and a cache older than the
    /// bootstrap document gives way to it. Under `.manual`, the activated version set aside while a newer one
    /// waits is the one in use (FlagClient+Activated.swift).
    static func loadSet(
        _ configuration: Configuration, verifier: SetVerifier?, cache: FlagCache?, now: Date,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> StartingSet {
        let newest = loadNewest(configuration, verifier: verifier, cache: cache, now: now, log: log)
        return startFromActivated(newest, configuration, verifier: verifier, now: now, log: log)
    }

    /// The set to start with when the newest version cached is the one in use.
    private static func loadNewest(
        _ configuration: Configuration, verifier: SetVerifier?, cache: FlagCache?, now: Date,
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> StartingSet {
        var cache = cache
        var refusal: SetRefusal?
        var floor = 0
        var verifiedBootstrap = false
        if let verifier, let bootstrap = configuration.bootstrap {
            do {
                floor = try verifyBootstrap(bootstrap, signature: configuration.bootstrapSignature, verifier)
                verifiedBootstrap = true
            } catch {
                refusal = error
                log(.error, "the bootstrap document is not used: \(error.message)")
            }
        }
        func starting(_ state: ClientState, source: (any EvaluationSource)?) -> ClientState {
            guard let refusal else { return state }
            return .refused(version: source?.version, refusal)
        }
        if let opened = cache {
            do {
                if let stored = try opened.stored(set: configuration.set) {
                    if let (index, patches) = try readCached(
                        stored, set: configuration.set, verifier: verifier, log: log)
                    {
                        let source = LazySource(index: index, patches: patches)
                        if source.version >= floor {
                            return StartingSet(
                                cache: cache, cached: (stored.document, patches), source: source,
                                state: starting(.cached(version: source.version), source: source), floor: floor,
                                signed: verifier == nil ? nil : stored)
                        }
                        log(
                            .info,
                            "the cached set v\(source.version) is older than the bootstrap document "
                                + "v\(floor); starting from the bootstrap document")
                    }
                }
            } catch let error as SQLiteError where error.isCorruption {
                do {
                    try opened.rebuild(damaged: opened.database, now: now)
                } catch {
                    log(.error, "no flag cache: the damaged one could not be rebuilt (\(error))")
                    cache = nil
                }
            } catch let error as SetRefusal {
                refusal = error
                log(.error, "the cached set is not used: \(error.message)")
                // Bytes that fail verification were changed: moved aside like a damaged file. A cache that is only
                // unsigned (written before trusted keys were configured) or signed by a key no longer trusted holds
                // nothing wrong; the next download replaces it.
                if error.code != .unsigned, error.code != .untrustedKey {
                    do {
                        try opened.rebuild(damaged: opened.database, because: "failed verification", now: now)
                    } catch {
                        log(.error, "no flag cache: the one that failed verification could not be rebuilt (\(error))")
                        cache = nil
                    }
                }
            } catch {
                log(.warning, "could not read the cached document (\(error)); serving defaults until a download")
            }
        }
        if let bootstrap = configuration.bootstrap, verifier == nil || verifiedBootstrap {
            do {
                let compiled = try Documents.validate(bootstrap, set: configuration.set)
                guard verifier == nil || compiled.version == floor else {
                    throw DocumentRejected(message: "its version \(compiled.version) is not the one read (\(floor))")
                }
                let document = FlagCache.Document(
                    version: compiled.version, etag: nil, bytes: bootstrap,
                    index: try DocumentIndex(scanning: bootstrap).encoded(),
                    signature: verifier == nil ? nil : configuration.bootstrapSignature.map(trimmedSignature))
                if let cache, !cache.readOnly {
                    do {
                        try cache.store(set: configuration.set, document: document, now: now)
                    } catch {
                        log(.warning, "could not cache the bootstrap document: \(error)")
                    }
                }
                let source = CompiledSource(compiled)
                return StartingSet(
                    cache: cache, source: source, state: starting(.cached(version: compiled.version), source: source),
                    model: compiled.flagSet, floor: floor,
                    signed: verifier == nil ? nil : FlagCache.Stored(document: document))
            } catch {
                log(.error, "the bootstrap document is unusable: \(error)")
            }
        }
        return StartingSet(cache: cache, state: starting(.defaultsOnly, source: nil), floor: floor)
    }

    /// The index of the cached document and the patches applied since, in order; `nil` (logged) when they are not a
    /// set this client can use; throws a refusal when, with a verifier, they do not verify. With a verifier the
    /// stored index is not used: nothing signs it, and ranges that point elsewhere would serve other bytes than
    /// the signed ones.
    static func readCached(
        _ stored: FlagCache.Stored, set: String, verifier: SetVerifier?,
        log: (FlagClientLogMessage.Level, String) -> Void
    ) throws -> (DocumentIndex, [SetPatch])? {
        let document = stored.document
        // The stored ranges spare scanning the JSON; a missing or damaged index is rebuilt by a scan.
        let kept =
            verifier == nil ? document.index.flatMap { DocumentIndex(bytes: document.bytes, encodedIndex: $0) } : nil
        let index = try kept ?? DocumentIndex(scanning: document.bytes)
        guard index.name == set, index.version == document.version, index.version >= 1 else {
            log(.warning, "the cached document is not a document of set '\(set)'; ignored")
            return nil
        }
        try verifier?.verify(
            document.bytes, version: index.version, base: nil, signature: document.signature,
            what: "the cached document v\(index.version)")
        var patches: [SetPatch] = []
        var version = index.version
        for stored in stored.patches {
            let what = "the cached patch v\(stored.version) (from v\(stored.base))"
            guard stored.base == version else {
                throw SetRefusal(
                    .brokenChain, "\(what) does not follow v\(version), the version before it",
                    refusedVersion: stored.version)
            }
            try verifier?.verify(
                stored.bytes, version: stored.version, base: stored.base, signature: stored.signature, what: what)
            let patch = try SetPatch.decode(stored.bytes)
            guard patch.version == stored.version, patch.base == stored.base else {
                throw SetRefusal(
                    .brokenChain, "\(what) holds the patch v\(patch.version) (from v\(patch.base))",
                    refusedVersion: stored.version)
            }
            patches.append(patch)
            version = patch.version
        }
        return (index, patches)
    }

    /// The version of the bootstrap document, once its signature verified.
    private static func verifyBootstrap(
        _ bytes: [UInt8], signature: String?, _ verifier: SetVerifier
    ) throws(SetRefusal) -> Int {
        let layout: FlagSet.Layout
        do {
            layout = try FlagSet.Layout.scan(bytes)
        } catch {
            throw SetRefusal(
                .badSignature, "the bootstrap document is not a JSON object (\(error))", refusedVersion: nil)
        }
        try verifier.verify(
            bytes, version: layout.version, base: nil, signature: signature.map(trimmedSignature),
            what: "the bootstrap document v\(layout.version)")
        return layout.version
    }

    /// A signature as read from a `.sig` file: the line break that ends a file is not part of the value.
    static func trimmedSignature(_ text: String) -> String {
        var text = Substring(text)
        while let last = text.last, last == "\n" || last == "\r" || last == "\r\n" { text = text.dropLast() }
        return String(text)
    }
}
