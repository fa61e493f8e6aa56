import FlagCore

/// How a checked-in generated file differs from what the set generates now: the CI drift check
/// (`flagctl generate swift --check FILE`).
///
/// A key added, removed, retyped, with a new default, newly deprecated (or no longer), renamed in Swift, or an enum
/// flag with a value added, removed, renamed in Swift or moved is drift:
/// code that compiles against the file would behave or compile differently. The recorded version alone or a doc
/// comment alone is not, unless `strict`. Code outside the declarations that differs (imports, `--access`,
/// `--namespace`, a hand edit) is drift too.
struct Drift: Equatable {
    /// What kind of change, as `--json` names it.
    enum Kind: String {
        case added, removed, retyped, `default`, deprecated, undeprecated, renamed, values, code, version, documentation
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
        if let before = old.cases, let after = new.cases {
            changes += valueChanges(key, before, after)
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

    /// How an enum flag's cases changed: each value added, removed or given another case name, and a new order.
    private static func valueChanges(_ key: String, _ old: [SwiftEnum.Case], _ new: [SwiftEnum.Case]) -> [Drift] {
        var changes: [Drift] = []
        let before = Dictionary(old.map { ($0.value, $0.name) }, uniquingKeysWith: { first, _ in first })
        let after = Dictionary(new.map { ($0.value, $0.name) }, uniquingKeysWith: { first, _ in first })
        func shown(_ value: String) -> String { SwiftSource.stringLiteral(value) }
        for item in new where before[item.value] == nil {
            changes.append(Drift(kind: .values, key: key, detail: "value \(shown(item.value)) added as .\(item.name)"))
        }
        for item in old where after[item.value] == nil {
            changes.append(
                Drift(
                    kind: .values, key: key,
                    detail: "value \(shown(item.value)) removed (code using .\(item.name) must change)"))
        }
        for item in new {
            guard let was = before[item.value], was != item.name else { continue }
            changes.append(
                Drift(
                    kind: .values, key: key,
                    detail: "value \(shown(item.value)) renamed in Swift .\(was) → .\(item.name) "
                        + "(code using .\(was) must change)"))
        }
        let kept = old.map(\.value).filter { after[$0] != nil }
        if changes.isEmpty && kept != new.map(\.value) {
            changes.append(
                Drift(
                    kind: .values, key: key,
                    detail: "values reordered: \(new.map(\.name).joined(separator: ", ")) (allCases follows)"))
        }
        return changes
    }
}
