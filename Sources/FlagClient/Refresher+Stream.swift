import FlagCore
import FlagSigning
import Foundation

extension Refresher {
    /// One connection to the SSE stream, until it ends, fails, or sends bad data.
    func runStream() async -> RefreshStateMachine.Outcome {
        var parser = SSEParser()
        var opened = false
        var heard = false
        do {
            for try await part in core.dependencies.transport.stream(request(path: "/stream", stream: true)) {
                switch part {
                case .head(let head):
                    observe(head)
                    switch head.status {
                    case 200:
                        guard head["content-type"]?.lowercased().hasPrefix("text/event-stream") == true else {
                            return .streamUnsupported
                        }
                        opened = true
                        recordOpened()
                    // Not live yet: a newer set may be on its way. The server sends a put or, when our
                    // Last-Event-ID is current, a comment; events come in order, so the first comment means
                    // the set in use is the live one.
                    case 401, 403: return .unauthorized(status: head.status)
                    case 404, 405, 501: return .streamUnsupported
                    default:
                        return failure(head, "the stream of set '\(setName)'")
                    }
                case .bytes(let bytes):
                    guard opened else { continue }
                    heard = heard || !bytes.isEmpty
                    for item in parser.feed(bytes) {
                        if let outcome = await handle(item) { return outcome }
                    }
                }
            }
        } catch {
            if !Task.isCancelled {
                core.log(.info, "the stream of set '\(setName)' broke: \(error.localizedDescription)")
            }
        }
        return opened ? .streamEnded(silent: !heard) : .failed
    }

    /// Applies one parsed item; returns an outcome when the connection must end.
    private func handle(_ item: SSEItem) async -> RefreshStateMachine.Outcome? {
        switch item {
        case .comment:
            // `: current` on connect, or a heartbeat: whatever the server had to send came before it. (The bytes
            // themselves reset the idle timeout.)
            markLive()
            return nil
        case .retry(let milliseconds):
            recordRetry(seconds: Double(milliseconds) / 1000)
            return nil
        case .event(let event):
            switch SetStreamEvent(rawValue: event.type) {
            case .put:
                let applied = applyDocument(
                    Array(event.data.utf8), etag: nil, signature: event.signature, via: "a put event on the stream")
                guard applied else { return .badData }
                setLastEventID(event.id)
                return nil
            case .patch:
                switch applyPatch(Array(event.data.utf8), signature: event.signature) {
                case .applied:
                    setLastEventID(event.id)
                    await compactSignedCache()
                    return nil
                case .bad:
                    return .badData
                case .needsDocument:
                    // Our version is not the patch's base: fetch the whole document, keep the stream.
                    let outcome = await fetch(wait: 0)
                    if outcome == .fetched { return nil }
                    return outcome
                }
            case nil:
                return nil  // unknown event types are ignored, for servers newer than this client
            }
        }
    }
}

extension Refresher {
    enum PatchResult: Equatable {
        case applied, needsDocument, bad
    }

    /// Validates (and, with trusted keys, verifies), caches and puts a whole document in use. `false` when it is bad
    /// or refused (the old set stays). Cached first, so that `ready` returning means the set is on disk too: a
    /// process that exits right after it (a job, a CLI, a test) starts from that set next time. The write costs
    /// about a millisecond, once per whole document. `via` says where it came from, for the log.
    func applyDocument(_ bytes: [UInt8], etag newETag: String?, signature: String?, via: String) -> Bool {
        let compiled: CompiledFlagSet
        do {
            compiled = try Documents.validate(bytes, set: setName)
        } catch {
            core.log(.warning, "ignored a document from the server: \(error)")
            return false
        }
        let version = compiled.version
        var document = FlagCache.Document(version: version, etag: newETag ?? "\"\(version)\"", bytes: bytes)
        if let verifier {
            let what = "the document v\(version) \(via)"
            do {
                try verifier.verify(bytes, version: version, base: nil, signature: signature, what: what)
                try verifier.requireNotOlder(version, than: lowestAcceptable, what: what)
            } catch {
                refuse(error)
                return false
            }
            document.signature = signature
        }
        if let current = currentModel, current.version == version, current == compiled.flagSet {
            // The set in use, sent again (a reconnect without Last-Event-ID): nothing to replace. With trusted keys,
            // signed patches cached since the last document give way to this one, which signs the same set whole.
            if verifier != nil, signed?.patches.isEmpty == false {
                signed = FlagCache.Stored(document: document)
                store(FlagCache.Stored(document: document))
            }
            markLive()
            return true
        }
        adopt(compiled.flagSet, etag: document.etag ?? "\"\(version)\"")
        if verifier != nil { signed = FlagCache.Stored(document: document) }
        store(FlagCache.Stored(document: document))
        core.publish(source: CompiledSource(compiled), state: .live(version: version))
        return true
    }

    /// Applies a patch whose base is the version in use: the changed flags are compiled and served at once over the
    /// previous set, then the whole set is compiled and cached. With trusted keys the patch is verified first, even
    /// one that does not apply, so that unsigned events cannot make the client fetch documents; what the cache
    /// keeps is then the patch's signed bytes, not the patched document re-encoded.
    func applyPatch(_ bytes: [UInt8], signature: String?) -> PatchResult {
        let patch: FlagPatch
        do {
            patch = try FlagPatch.decode(bytes)
        } catch {
            core.log(.warning, "ignored a patch from the server: \(error)")
            return .bad
        }
        if let verifier {
            do {
                try verifier.verify(
                    bytes, version: patch.version, base: patch.base, signature: signature,
                    what: "the patch v\(patch.version) (from v\(patch.base)) on the stream")
                // A signed patch to an older version, replayed, would otherwise make the client fetch the document
                // at each one; to the version in use, it changes nothing.
                try verifier.requireNotOlder(
                    patch.version, than: lowestAcceptable, what: "the patch v\(patch.version) (from v\(patch.base))")
            } catch {
                refuse(error)
                return .bad
            }
            if patch.version == currentModel?.version { return .applied }
        }
        guard let current = currentModel, patch.base == current.version, let base = core.newestSource,
            base.killed != nil
        else {
            return .needsDocument
        }
        let next = patch.applied(to: current)
        do {
            if !patch.changesCohorts {
                let overlay = try patch.overlay(on: next)
                var killed = base.killed ?? [:]
                for key in patch.touchedFlags { killed[key] = nil }
                for (key, value) in CompiledSource.killed(in: overlay.flagSet) { killed[key] = value }
                let source = OverlaySource(
                    base: base, overlay: overlay, changed: patch.touchedFlags, removed: patch.removedFlags,
                    version: patch.version, killed: killed)
                core.publish(source: source, state: .live(version: patch.version))
            }
            let compiled = CompiledFlagSet(next, sessionSlots: FlagSlots.slot)
            if next.schema <= FlagSet.currentSchema, let problem = compiled.problems.first {
                throw DocumentRejected(message: "patch v\(patch.version) makes the set invalid: \(problem)")
            }
            adopt(next, etag: "\"\(patch.version)\"")
            if verifier != nil, let signature {
                let cached = FlagCache.Patch(
                    version: patch.version, base: patch.base, bytes: bytes, signature: signature)
                signed?.patches.append(cached)
                store(cached)
            } else {
                store(
                    FlagCache.Stored(
                        document: FlagCache.Document(version: patch.version, etag: etag, bytes: next.encoded())))
            }
            core.publish(source: CompiledSource(compiled), state: .live(version: patch.version))
            return .applied
        } catch {
            core.log(.warning, "ignored a patch from the server: \(error)")
            // The overlay may already be in use only if the whole set then failed, which the overlay's own check
            // rules out for flag-only patches; for cohort patches nothing was published.
            return .bad
        }
    }
}

extension Refresher {
    /// With trusted keys, how many signed patches the cache keeps after its signed document before the client
    /// fetches the version they make whole: each one is verified at every launch.
    static let compactAfter = 16

    /// Replaces the cached signed document and its many patches with the same version fetched whole
    /// (`GET /v1/sets/{set}/versions/{n}`, signed like any document). A failure is logged and tried again after the
    /// next patch, never sooner; nothing in use changes either way.
    func compactSignedCache() async {
        guard let verifier, core.cache != nil, let signed, signed.patches.count >= Self.compactAfter,
            let model = currentModel, model.version == signed.version
        else { return }
        let version = signed.version
        var request = request(path: "/versions/\(version)", stream: false)
        request.headers["If-None-Match"] = nil
        let head: TransportHead
        let body: [UInt8]
        do {
            (head, body) = try await core.dependencies.transport.fetch(request)
        } catch {
            core.log(.info, "fetching set '\(setName)' v\(version) to compact the cache failed: \(error)")
            return
        }
        guard head.status == 200 else {
            core.log(.info, "fetching set '\(setName)' v\(version) to compact the cache answered HTTP \(head.status)")
            return
        }
        let signature = head[Signature.headerName]
        do {
            try verifier.verify(
                body, version: version, base: nil, signature: signature,
                what: "the document v\(version) fetched to compact the cache")
            let compiled = try Documents.validate(body, set: setName)
            // Not the whole set: its `updatedAt` is the version's own, which no patch carries.
            let whole = compiled.flagSet
            guard whole.flags == model.flags, whole.unreadableFlags == model.unreadableFlags,
                whole.cohorts == model.cohorts, whole.unreadableCohorts == model.unreadableCohorts
            else {
                throw DocumentRejected(message: "v\(version) fetched whole differs from the patches received")
            }
        } catch {
            core.log(.error, "the cache keeps its patches: \(error)")
            return
        }
        // The stream's events are handled one at a time, but the fetch was a suspension point: only the same
        // version may replace what is cached.
        guard self.signed?.version == version else { return }
        let document = FlagCache.Document(version: version, etag: etag, bytes: body, signature: signature)
        self.signed = FlagCache.Stored(document: document)
        store(FlagCache.Stored(document: document))
    }
}
