import FlagCore
import Foundation

/// What `lint FILE --against SERVER` finds: the constructs of a file's flags (and cohorts) that active client
/// instances do not declare they can evaluate, and the values its flags can serve that instances reading them as
/// enums do not know, judged as the server's compatibility gate judges a write of the file (docs/telemetry.md):
/// refused when more than 0.1 % of the active instances lack something the file introduces.
struct CompatibilityCheck {
    /// One construct some active instances cannot evaluate.
    struct Finding: Equatable {
        /// `flags.new-checkout` or `cohorts.beta`.
        let path: String
        let construct: CompatibilityGate.Construct
        /// Active instances that lack it.
        let lacking: Int
        /// Active instances in all.
        let active: Int
        /// The SDK versions of those that lack it, the most instances first.
        let sdks: [SDKCount]
        /// Whether the file introduces it: the server's current version of the flag (or cohort) does not need it.
        /// Only what a write introduces meets the gate.
        let introduced: Bool
        /// For a value: the apps and SDKs of those that lack it (`CompatibilityGate.build`), with how many each.
        var builds: [String: Int] = [:]
        /// For a value: the compiled-in defaults those that lack it reported (`nil`: not reported), with how many
        /// reported each: what they serve in its place.
        var defaults: [String?: Int] = [:]
    }

    /// The findings and the gate's verdict.
    struct Outcome: Equatable {
        /// Every construct lacked by at least one active instance.
        let findings: [Finding]
        /// Active instances.
        let active: Int
        /// Those that lack at least one construct the file introduces: the gate's count.
        let lackingIntroduced: Int

        /// Whether the gate (`compatibility: enforce`) would refuse the file as a write: more than 0.1 % of the active
        /// instances lack something it introduces.
        var refused: Bool { CompatibilityGate.refuses(lacking: lackingIntroduced, active: active) }
    }

    /// The file's set.
    let file: FlagSet
    /// The server's current version of the set, to tell what the file introduces; `nil` when there is none.
    let current: FlagSet?
    /// The active instances, with their capabilities.
    let instances: [ReportingInstance]

    /// Checks every flag (in key order) for what it needs and the values it can serve, then every cohort for the
    /// operators it introduces (the gate's second clause). What a flag needs (or can serve) and its version on the
    /// server did not is what the file introduces (`CompatibilityGate`, the server's own rules); the rest is
    /// reported as a note.
    func run() -> Outcome {
        var constructs: [(path: String, construct: CompatibilityGate.Construct, introduced: Bool)] = []
        for key in file.flags.keys.sorted(by: utf8Less) {
            guard let flag = file.flags[key] else { continue }
            let needs = file.needs(of: flag)
            let serving = current?.flags[key]
            let before = current.flatMap { set in serving.map { set.needs(of: $0) } }
            let introduced = Set(
                CompatibilityGate.introduced(needing: needs, before: before)
                    + CompatibilityGate.introduced(serving: flag, before: serving))
            let path = "flags.\(key)"
            let all =
                CompatibilityGate.introduced(needing: needs, before: nil)
                + CompatibilityGate.introduced(serving: flag, before: nil)
            for construct in all { constructs.append((path, construct, introduced.contains(construct))) }
        }
        for name in file.cohorts.keys.sorted(by: utf8Less) {
            guard let cohort = file.cohorts[name] else { continue }
            for construct in CompatibilityGate.introduced(by: cohort, before: current?.cohorts[name]) {
                constructs.append(("cohorts.\(name)", construct, true))
            }
        }
        var findings: [Finding] = []
        var lackingIntroduced: Set<String> = []
        for item in constructs {
            let lacking = instances.filter { Self.lacks($0, item.construct) }
            guard !lacking.isEmpty else { continue }
            if item.introduced { lackingIntroduced.formUnion(lacking.map(\.id)) }
            var bySDK: [TelemetryReport.Software: Int] = [:]
            for instance in lacking { bySDK[instance.sdk, default: 0] += 1 }
            var finding = Finding(
                path: item.path, construct: item.construct, lacking: lacking.count, active: instances.count,
                sdks: SDKCount.ordered(bySDK.map { SDKCount(sdk: $0.key, instances: $0.value) }),
                introduced: item.introduced)
            if case .value(_, let flag) = item.construct {
                for instance in lacking {
                    finding.builds[CompatibilityGate.build(sdk: instance.sdk, app: instance.app), default: 0] += 1
                    finding.defaults[instance.enums[flag]?.defaultValue, default: 0] += 1
                }
            }
            findings.append(finding)
        }
        return Outcome(findings: findings, active: instances.count, lackingIntroduced: lackingIntroduced.count)
    }

    /// Whether `instance` does not declare it can evaluate `construct`. One that declared no capabilities counts as
    /// lacking every operator and schema; one that declared no values for a flag lacks none of its values.
    static func lacks(_ instance: ReportingInstance, _ construct: CompatibilityGate.Construct) -> Bool {
        construct.isLacking(
            in: instance.capabilities ?? ClientCapabilities(schema: 0, operators: []), enums: instance.enums)
    }
}

/// How the check reads for people and for scripts.
extension CompatibilityCheck.Finding {
    /// `operator "semver_gte"`, `schema 2`.
    var constructText: String { construct.description }

    /// `flags.new-checkout: operator "semver_gte" cannot be evaluated by 3 of 850 active instances of prod (0.35%):
    /// FlagClient 1.2.0 (3); they would serve the flag's compiled-in default`, with `note: ` before it when the gate
    /// lets it pass, and why.
    ///
    /// A value reads `flags.checkout-theme: value "orange" is not known to 1 of 2 active instances of prod (50%):
    /// Shop 5.2.0 with FlagClient 2.0.0 (1); they would serve their compiled-in default "blue"`.
    func line(set: String, refused: Bool) -> String {
        let sdkList = sdks.map { "\($0.sdk.name) \($0.sdk.version) (\($0.instances))" }.joined(separator: ", ")
        let who = "\(lacking) of \(counted(active, "active instance")) of \(set) (\(Self.share(lacking, of: active)))"
        let text: String
        if case .value = construct {
            let buildList = builds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }
                .map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
            text =
                "\(path): \(constructText) is not known to \(who): \(buildList); they would serve "
                + CompatibilityGate.servedInstead(defaults)
        } else {
            text =
                "\(path): \(constructText) cannot be evaluated by \(who): \(sdkList); they would serve the flag's "
                + "compiled-in default"
        }
        if !introduced { return "note: \(text) (\(set) already serves it, so the gate lets it pass)" }
        return refused ? text : "note: \(text) (0.1% or fewer of the active instances, so the gate lets it pass)"
    }

    /// `0.35%`: two decimals, cut, so that the 0.1 % threshold reads exactly.
    static func share(_ part: Int, of whole: Int) -> String {
        guard whole > 0 else { return "0%" }
        let hundredths = part * 10_000 / whole
        let (whole, fraction) = (hundredths / 100, hundredths % 100)
        if fraction == 0 { return "\(whole)%" }
        if fraction % 10 == 0 { return "\(whole).\(fraction / 10)%" }
        return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)%"
    }

    /// `{"path","operator"|"schema"|"value","lacking","active","sdks":[{"name","version","instances"}],"introduced"}`,
    /// and for a value `"builds":{"Shop 5.2.0 with FlagClient 2.0.0":1}` and `"defaults":[{"default","instances"}]`
    /// (`"default":null` where not reported).
    var json: JSONValue {
        var members: [String: JSONValue] = [
            "path": .string(path), "lacking": .int(Int64(lacking)), "active": .int(Int64(active)),
            "introduced": .bool(introduced),
            "sdks": .array(
                sdks.map {
                    .object([
                        "name": .string($0.sdk.name), "version": .string($0.sdk.version),
                        "instances": .int(Int64($0.instances)),
                    ])
                }),
        ]
        switch construct {
        case .operator(let name): members["operator"] = .string(name)
        case .schema(let schema): members["schema"] = .int(Int64(schema))
        case .value(let value, _):
            members["value"] = .string(value)
            members["builds"] = .object(builds.mapValues { .int(Int64($0)) })
            members["defaults"] = .array(
                defaults.sorted { ($1.value, $0.key ?? "") < ($0.value, $1.key ?? "") }.map {
                    .object(["default": $0.key.map { .string($0) } ?? .null, "instances": .int(Int64($0.value))])
                })
        }
        return .object(members)
    }
}
