import FlagCore
import FlagHTTP
import FlagSigning

/// Signing keys (docs/signing.md): their public halves for clients and admins, and the admin's rotation in two
/// steps, each recorded in the audit log.
extension FlagServerApp {
    /// `GET /v1/sets/{set}/signing-keys`: `{"keys":[{"id","publicKey","state","createdAt"}]}`, oldest first.
    func signingKeysResponse(_ call: Call) throws -> HTTPResponse {
        let keys = try service.signingKeys(try requireState(call).name)
        return JSONResponse.object { writer in
            writer.key("keys")
            writer.beginArray()
            for key in keys { Self.write(key, to: &writer) }
            writer.endArray()
        }
    }

    /// `POST /v1/admin/sets/{set}/signing-keys`: adds a key, published (or active, for a set that had none).
    func rotateSigningKey(_ call: Call) throws -> HTTPResponse {
        let set = try requireState(call).name
        let input = try RequestInput(call.request)
        let key = try service.rotateSigningKey(
            set, note: ChangeNote(actor: call.actor, action: "signing-key.rotate", reason: try input.reason()))
        return JSONResponse.object(status: 201) { writer in Self.writeMembers(key, to: &writer) }
    }

    /// `POST /v1/admin/sets/{set}/signing-keys/{name}/activate` and `…/retire`: the key's new state, with the list.
    func changeSigningKey(_ call: Call, activate: Bool) throws -> HTTPResponse {
        let set = try requireState(call).name
        let input = try RequestInput(call.request)
        let note = ChangeNote(
            actor: call.actor, action: activate ? "signing-key.activate" : "signing-key.retire",
            reason: try input.reason())
        if activate {
            try service.activateSigningKey(set, id: call.name, note: note)
        } else {
            try service.retireSigningKey(set, id: call.name, note: note)
        }
        return try signingKeysResponse(call)
    }

    private static func write(_ key: PublishedSigningKey, to writer: inout JSONWriter) {
        writer.beginObject()
        writeMembers(key, to: &writer)
        writer.endObject()
    }

    private static func writeMembers(_ key: PublishedSigningKey, to writer: inout JSONWriter) {
        writer.member("id", key.key.id)
        writer.member("publicKey", key.key.base64)
        writer.member("state", key.state.rawValue)
        writer.member("createdAt", key.createdAt)
    }
}
