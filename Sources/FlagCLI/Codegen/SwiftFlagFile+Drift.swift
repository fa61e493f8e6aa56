import FlagCore

/// How a checked-in generated file differs from what the set generates now: the CI drift check
/// (`flagctl generate swift --check FILE`).
///
/// A key added, removed, retyped, with a new default, newly deprecated (or no longer), or renamed in Swift is drift:
/// code that compiles against the file would behave or compile differently. The recorded version alone or a doc
/// comment alone is not, unless `strict`. Code outside the declarations that differs (imports, `--access`,
/// `--namespace`, a hand edit) is drift too.
struct Drift: Equatable {
    /// What kind of change, as `--json` names it.
    enum Kind: String {
        case added, removed, retyped, `default`, deprecated, undeprecated, renamed, code, version, documentation
    }

    let kind: Kind
    /// The flag's key; empty for the file as a whole.
    let key: String
    /// The change for people, e.g. `default false → true`.
    let detail: String

    /// `+ new-checkout: added as newCheckout (Bool, default false)`
    var line: String {
        switch kind {
        case .added: "+ \(key): \(detail)"
        case .removed: "- \(key): \(detail)"
        case .code, .version: "~ \(detail)"
        default: "~ \(key): \(detail)"
        }
    }

    /// The differences from `old` (the file on disk) to `new` (the file the set generates now), in key order.
    static func changes(from old: GeneratedSwiftFile, to new: GeneratedSwiftFile, strict: Bool) -> [Drift] {
        var changes: [Drift] = []
        let before = Dictionary(old.declarations.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.declarations.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for key in Set(before.keys).union(after.keys).sorted(by: utf8Less) {
            switch (before[key], after[key]) {
            case (nil, let added?):
                changes.append(
                    Drift(
                        kind: .added, key: key,
                        detail: "added as \(added.name) (\(added.typeName), default \(added.defaultLiteral))"))
            case (let removed?, nil):
                changes.append(Drift(kind: .removed, key: key, detail: "removed (was \(removed.name))"))
            case (let old?, let new?):
                changes += differences(key, old, new, strict: strict)
            case (nil, nil):
                break
            }
        }
        let declarationsChanged = !changes.isEmpty
        if !declarationsChanged && old.code != new.code {
            changes.append(
                Drift(
                    kind: .code, key: "",
                    detail: "code outside the declarations differs (imports, --access, --namespace or a hand edit)"))
        }
        if strict && (old.setName != new.setName || old.version != new.version) {
            let was = old.version.map { "set \(old.setName ?? "?"), version \($0)" } ?? "no generator header"
            changes.append(
                Drift(
                    kind: .version, key: "",
                    detail: "generated from \(was); the set is now \(new.setName ?? "?"), version \(new.version ?? 0)"))
        }
        return changes
    }

    private static func differences(
        _ key: String, _ old: GeneratedSwiftFile.Declaration, _ new: GeneratedSwiftFile.Declaration, strict: Bool
    ) -> [Drift] {
        var changes: [Drift] = []
        if old.name != new.name {
            changes.append(
                Drift(
                    kind: .renamed, key: key,
                    detail: "renamed in Swift \(old.name) → \(new.name) (code using .\(old.name) must change)"))
        }
        if old.typeName != new.typeName {
            changes.append(Drift(kind: .retyped, key: key, detail: "type \(old.typeName) → \(new.typeName)"))
        }
        if old.defaultLiteral != new.defaultLiteral {
            changes.append(
                Drift(kind: .default, key: key, detail: "default \(old.defaultLiteral) → \(new.defaultLiteral)"))
        }
        switch (old.deprecation, new.deprecation) {
        case (nil, let message?):
            changes.append(Drift(kind: .deprecated, key: key, detail: "newly deprecated: \(message)"))
        case (_?, nil):
            changes.append(Drift(kind: .undeprecated, key: key, detail: "no longer deprecated"))
        case (let was?, let now?) where was != now:
            changes.append(Drift(kind: .deprecated, key: key, detail: "deprecated differently: \(now)"))
        default:
            break
        }
        if strict && old.documentation != new.documentation {
            changes.append(Drift(kind: .documentation, key: key, detail: "doc comment changed"))
        }
        return changes
    }
}
