import FlagCore
import FlagHTTP

/// What one keep-alive connection's earlier requests settled, so that its next requests skip the work: the token
/// check (hashing every request's token was a visible share of the serving profile) and the set lookup (the
/// registry's lock and a hash of the name). Kept in the connection's `HTTPConnectionContext` and replaced whole,
/// never changed, so a request reads either all of an old memo or all of a new one.
final class ConnectionMemo: Sendable {
    /// The exact `Authorization` bytes that passed, whom they named, and the token authority's generation then: any
    /// revocation since makes them stale.
    struct Credential: Sendable {
        let header: [UInt8]
        let principal: Principal
        let generation: Int
    }

    /// The set this connection's requests named last and the answers of its state, as of the registry's `epoch`:
    /// while the epoch is unchanged the state is current. It keeps its state alive until the connection's next
    /// request or its close (the idle timeout, 60 s by default), so the versions held at once are at most those
    /// published within one idle timeout.
    struct RememberedSet: Sendable {
        let name: String
        let state: SetState
        /// The state's prepared answers, once a request of this connection needed them.
        let answers: VersionAnswers?
        let epoch: Int
    }

    /// The instance id issued on this connection's first answer to a poll of a set (docs/telemetry.md): later
    /// polls on the connection need none.
    struct IssuedInstance: Sendable {
        let set: String
        let id: String
    }

    let credential: Credential?
    let set: RememberedSet?
    let instance: IssuedInstance?

    init(credential: Credential?, set: RememberedSet?, instance: IssuedInstance? = nil) {
        self.credential = credential
        self.set = set
        self.instance = instance
    }

    /// The memo of `connection`, if it has one.
    static func of(_ connection: HTTPConnectionContext) -> ConnectionMemo? {
        connection.attachment as? ConnectionMemo
    }
}

extension FlagServerApp {
    /// The principal of the request's token: 401 without a valid one, or with more than one `Authorization` field.
    /// A keep-alive client repeating the header that passed last time is recognised by a constant-time comparison
    /// of the bytes, not by hashing the token again. `memo` is the connection's, read once per request; it is
    /// replaced here when the check changes what the connection remembers. `generation` is the token authority's,
    /// read before: a remembered check of another generation is made again.
    func authenticate(_ request: HTTPRequest, memo: inout ConnectionMemo?, generation: Int) throws -> Principal {
        // Two fields may name two principals (one added by a proxy, say); answering as the first would let the order
        // of fields decide who the caller is.
        let connection = request.connection
        var count = 0
        var remembered: Principal?
        request.headers.forEachValue(named: "Authorization") { value in
            count += 1
            if count == 1, let credential = memo?.credential, credential.generation == generation,
                Self.bytesEqualInConstantTime(value, credential.header)
            {
                remembered = credential.principal
            }
            return true
        }
        guard count <= 1 else { throw ServiceError.unauthorized("send one Authorization header, not several") }
        if let remembered {
            try tokens.checkNotExpired(remembered)
            tokens.noteUse(remembered)
            return remembered
        }
        let header = request.headers["Authorization"]
        guard let connection else { return try tokens.authenticate(header) }
        do {
            let principal = try tokens.authenticate(header)
            let credential = ConnectionMemo.Credential(
                header: Array((header ?? "").utf8), principal: principal, generation: generation)
            memo = ConnectionMemo(credential: credential, set: memo?.set, instance: memo?.instance)
            connection.attach(memo)
            return principal
        } catch {
            if memo?.credential != nil {
                memo = ConnectionMemo(credential: nil, set: memo?.set, instance: memo?.instance)
                connection.attach(memo)
            }
            throw error
        }
    }

    /// The current state of the call's `{set}`; 404 when there is no such set.
    func requireState(_ call: Call) throws -> SetState {
        // Read before the state is looked up: a version published after this makes the memo stale, not wrong.
        let epoch = service.registry.epoch.load(ordering: .acquiring)
        if let remembered = rememberedSet(call, epoch: epoch) { return remembered.state }
        let state = try service.requireState(call.set)
        remember(state, answers: nil, for: call, epoch: epoch)
        return state
    }

    /// The prepared answers of the current state of the call's `{set}` (without the 200 while its document is not
    /// made yet); 404 when there is no such set.
    func requireAnswers(_ call: Call) throws -> VersionAnswers {
        let epoch = service.registry.epoch.load(ordering: .acquiring)
        let remembered = rememberedSet(call, epoch: epoch)
        if let known = remembered?.answers { return known }
        guard let (state, served) = service.registry.record(call.set) else {
            throw ServiceError.notFound("no flag set \"\(call.set)\"", subject: .set)
        }
        let current = answers.answers(for: state, served: served)
        remember(current.state, answers: current, for: call, epoch: epoch)
        return current
    }

    /// What the call's connection remembers of the call's `{set}`, if nothing was published since `epoch`.
    private func rememberedSet(_ call: Call, epoch: Int) -> ConnectionMemo.RememberedSet? {
        guard let remembered = call.memo?.set, remembered.epoch == epoch, remembered.name == call.set else {
            return nil
        }
        return remembered
    }

    /// Makes the call's connection remember `state` (and its `answers`) as the state of the call's set at `epoch`.
    private func remember(_ state: SetState, answers: VersionAnswers?, for call: Call, epoch: Int) {
        guard let connection = call.request.connection else { return }
        connection.attach(
            ConnectionMemo(
                credential: call.memo?.credential,
                set: .init(name: call.set, state: state, answers: answers, epoch: epoch), instance: call.memo?.instance)
        )
    }

    /// Compares without an early exit, so the time taken says nothing about where the bytes differ.
    static func bytesEqualInConstantTime(_ presented: UnsafeRawBufferPointer, _ known: [UInt8]) -> Bool {
        guard presented.count == known.count else { return false }
        var difference: UInt8 = 0
        known.withUnsafeBufferPointer { known in
            for index in 0..<known.count { difference |= presented[index] ^ known[index] }
        }
        return difference == 0
    }
}
