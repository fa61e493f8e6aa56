import FlagAPI
import FlagCore
import FlagHTTP
import FlagSigning

/// Signing keys (docs/signing.md): their public halves for clients and admins, and the admin's rotation in two
/// steps, each recorded in the audit log.
extension FlagServerApp {
    /// `GET /v1/sets/{set}/signing-keys`: `{"keys":[{"id","publicKey","state","createdAt"}]}`, oldest first.
    func signingKeys(_ call: Call) throws -> Reply<SigningKeyList> {
        Reply(SigningKeyList(keys: try service.signingKeys(try requireState(call).name).map(Self.info)))
    }

    /// `POST /v1/admin/sets/{set}/signing-keys`: adds a key, published (or active, for a set that had none).
    func rotateSigningKey(_ call: Call, _ request: ChangeRequest) throws -> Reply<SigningKeyInfo> {
        let set = try requireState(call).name
        let key = try service.rotateSigningKey(
            set, note: ChangeNote(actor: call.actor, action: "signing-key.rotate", reason: request.reason))
        return Reply(Self.info(key), status: 201)
    }

    /// `POST /v1/admin/sets/{set}/signing-keys/{name}/activate` and `…/retire`: the key's new state, with the list.
    func changeSigningKey(_ call: Call, _ request: ChangeRequest, activate: Bool) throws -> Reply<SigningKeyList> {
        let set = try requireState(call).name
        let note = ChangeNote(
            actor: call.actor, action: activate ? "signing-key.activate" : "signing-key.retire", reason: request.reason)
        if activate {
            try service.activateSigningKey(set, id: call.name, note: note)
        } else {
            try service.retireSigningKey(set, id: call.name, note: note)
        }
        return try signingKeys(call)
    }

    private static func info(_ key: PublishedSigningKey) -> SigningKeyInfo {
        SigningKeyInfo(id: key.key.id, publicKey: key.key.base64, state: key.state.rawValue, createdAt: key.createdAt)
    }
}
