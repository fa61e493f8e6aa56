import FlagCore

extension PostgresFlagStore {
    /// The channel on which every write that others must see is announced (`LISTEN flagstaff_changes`).
    package static let channel = "flagstaff_changes"

    /// The change a payload on `channel` announces, or `nil` for a payload that is not one of ours.
    package static func change(fromPayload payload: String) -> StoreChange? {
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
}

extension StoreChange {
    /// The payload of its notification on `PostgresFlagStore.channel`: canonical JSON that names what changed,
    /// never the data, so it stays far below PostgreSQL's limit of 8,000 bytes: `{"set":"ios","version":7}` or
    /// `{"tokens":true}`.
    package var payload: String {
        let value: JSONValue =
            switch self {
            case .set(let set, let version): .object(["set": .string(set), "version": .int(Int64(version))])
            case .tokens: .object(["tokens": .bool(true)])
            }
        return String(decoding: value.canonicalBytes, as: UTF8.self)
    }
}
