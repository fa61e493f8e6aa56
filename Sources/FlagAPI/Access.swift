/// What a token of the admin API may do (SPEC §4), from least to most.
public enum AdminRole: String, Sendable, Hashable, CaseIterable, Comparable, Codable {
    /// Every read of the admin API, evaluation and a dry-run import; no writes, no keys, tokens or metrics.
    case viewer
    /// A viewer that also changes flags and cohorts: rules, rollouts, overrides, kills, expiry, archive, import and
    /// rollback.
    case editor
    /// Everything, sets, SDK keys and tokens included.
    case admin

    /// The role's rank: a viewer is below an editor, an editor below an admin.
    var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .admin: 2
        }
    }

    /// Whether `lhs` may do less than `rhs`.
    public static func < (lhs: AdminRole, rhs: AdminRole) -> Bool { lhs.rank < rhs.rank }
}

/// Who may call a route. The server checks the caller against it before the handler runs, so that a refusal is
/// counted under the route's label and no handler can forget the check.
public enum Access: Sendable, Hashable {
    /// Anyone, without a token.
    case anyone
    /// Any valid token: an SDK key acts on its own set, a token of the admin API names one it may access.
    case anyToken
    /// An SDK key of the path's `{set}`, or a token of the admin API that may access that set.
    case setReader
    /// A token of the admin API with at least this role, that may access the path's `{set}` when it has one.
    case role(AdminRole)
    /// A token of the admin API with at least this role and no limit to sets: what concerns the whole server
    /// (creating sets, tokens, metrics).
    case unlimited(AdminRole)

    /// The least role of a token of the admin API; `nil` for the routes of clients and anyone.
    public var role: AdminRole? {
        switch self {
        case .role(let role), .unlimited(let role): role
        case .anyone, .anyToken, .setReader: nil
        }
    }
}
