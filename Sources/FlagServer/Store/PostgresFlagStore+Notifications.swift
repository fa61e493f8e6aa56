import FlagCore
import FlagPostgres

extension PostgresFlagStore {
    /// The channel on which every write that others must see is announced (`LISTEN flagstaff_changes`).
    package static let channel = "flagstaff_changes"

    /// What a notification on `channel` announces. Its payload names what changed, never the data, so it stays
    /// far below PostgreSQL's limit of 8,000 bytes: `{"set":"ios","version":7}` or `{"tokens":true}`.
    package enum Change: Sendable, Equatable {
        /// A set reached `version` (created at 1, or appended to).
        case set(String, version: Int)
        /// A token was added or revoked.
        case tokens

        /// The notification's payload: canonical JSON.
        package var payload: String {
            let value: JSONValue =
                switch self {
                case .set(let set, let version): .object(["set": .string(set), "version": .int(Int64(version))])
                case .tokens: .object(["tokens": .bool(true)])
                }
            return String(decoding: value.canonicalBytes, as: UTF8.self)
        }
    }

    /// The change a payload on `channel` announces, or `nil` for a payload that is not one of ours.
    package static func change(fromPayload payload: String) -> Change? {
        let value: JSONValue
        do {
            value = try JSONReader.parse(Array(payload.utf8))
        } catch {
            // Not JSON: not a payload this store sends, which is what `nil` says.
            return nil
        }
        switch value {
        case .object(let members) where members.count == 2:
            guard case .string(let set)? = members["set"], case .int(let version)? = members["version"],
                version >= 1
            else { return nil }
            return .set(set, version: Int(version))
        case .object(let members) where members == ["tokens": .bool(true)]:
            return .tokens
        default:
            return nil
        }
    }

    /// Announces `change` to every listening server when `db`'s transaction commits, and never if it rolls back.
    func notify(_ change: Change, _ db: PostgresConnection) throws {
        try db.execute("SELECT pg_notify($1, $2)", [.text(Self.channel), .text(change.payload)])
    }
}
