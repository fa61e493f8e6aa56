import FlagAPI
import FlagCore
import FlagHTTP
import Foundation

/// What clients report, and what the admin API shows of it (docs/telemetry.md): the report route, the instance
/// ids on the client routes, and the clients, usage, propagation and settings routes.
extension FlagServerApp {
    /// The header that carries an instance id: the server's answer issues one, a client's request presents it.
    static let instanceHeader = "Flagstaff-Instance"

    /// The instance id for a stream on `call`: the one the client presents when this server knows it, else a new
    /// one; bound to the stream until it closes. A stream opened with a token of the admin API (the dashboard's
    /// live view) gets none unless it asks: it is a person watching, not a client whose version matters.
    func streamInstance(_ call: Call) -> String? {
        let presented = call.request.headers[Self.instanceHeader].map { String($0.trimmingHTTPSpaces()) }
        if presented == nil, case .admin? = call.principal { return nil }
        return service.telemetry.issue(
            set: call.set, presented: presented, key: call.actor, stream: true, address: call.request.clientAddress)
    }

    /// The instance id for a poll's answer on `call`, issued as for a stream and remembered by the connection; `nil`
    /// when the connection got one for the set already (a keep-alive poller), or when the request carries no
    /// `Flagstaff-Instance` header (`new` asks for a first id). Pollers from before telemetry send none, so they add
    /// nothing to the instances a key may have: every poll of theirs would otherwise make another.
    func pollInstance(_ call: Call) -> String? {
        if let known = call.memo?.instance, known.set == call.set { return nil }
        guard let presented = call.request.headers[Self.instanceHeader] else { return nil }
        guard
            let id = service.telemetry.issue(
                set: call.set, presented: String(presented.trimmingHTTPSpaces()), key: call.actor, stream: false,
                address: call.request.clientAddress)
        else { return nil }
        if let connection = call.request.connection {
            // The memo as this request left it so far (the set lookup may have replaced it), not as it began.
            let memo = ConnectionMemo.of(connection)
            connection.attach(
                ConnectionMemo(credential: memo?.credential, set: memo?.set, instance: .init(set: call.set, id: id)))
        }
        return id
    }

    /// `response` with the instance header added, when there is an id to issue.
    static func issuing(_ id: String?, _ response: HTTPResponse) -> HTTPResponse {
        guard let id else { return response }
        var issued = response
        issued.headers.add(name: instanceHeader, value: id)
        return issued
    }

    /// `POST /v1/sets/{set}/telemetry`: a client's report. 204 when taken; 400 naming what is wrong; 413 over the
    /// size limit; 422 for an id this server did not issue; 429 over a rate limit.
    func acceptTelemetry(_ call: Call) throws -> HTTPResponse {
        let state = try requireState(call)
        do {
            try service.telemetry.admit(address: call.request.clientAddress)
        } catch let refusal as ClientTelemetry.Refusal {
            throw ServiceError.rateLimited(refusal.message, retryAfter: refusal.retryAfter ?? 1)
        }
        let limits = TelemetryReport.Limits()
        guard call.request.body.count <= limits.maxBytes else {
            service.telemetry.count(.invalid)
            throw ServiceError.tooLarge(
                "a telemetry report may have at most \(limits.maxBytes) bytes, this one has \(call.request.body.count)")
        }
        let report: TelemetryReport
        do {
            report = try TelemetryReport.decode(call.request.body, limits: limits)
        } catch {
            service.telemetry.count(.invalid)
            throw ServiceError.badRequest(error.description, path: error.field)
        }
        do {
            try service.telemetry.accept(report, set: call.set, key: call.actor, flags: state.compiled)
        } catch let refusal as ClientTelemetry.Refusal {
            switch refusal.reason {
            case .unknownInstance: throw ServiceError.unknownInstance(refusal.message)
            default: throw ServiceError.rateLimited(refusal.message, retryAfter: refusal.retryAfter ?? 1)
            }
        }
        return HTTPResponse(status: 204)
    }

    /// `GET /v1/admin/sets/{set}/clients?within=SECONDS`: instances that reported in the last 10 minutes (or
    /// `within` seconds: 300 is the window the gate and the propagation figures count as active), and the
    /// connections of this server whose clients do not report.
    func clients(_ call: Call, _ query: ClientsQuery) throws -> Reply<ClientsAnswer> {
        let set = try requireState(call).name
        let telemetry = service.telemetry
        let expiry = Int(telemetry.limits.expiry)
        let within = query.within ?? expiry
        guard (1...expiry).contains(within) else {
            throw ServiceError.badRequest("within must be from 1 to \(expiry) seconds, not \(within)", path: "within")
        }
        telemetry.flush()
        let instances = try service.storeCall { try telemetry.instances(set: set, within: TimeInterval(within)) }
        return Reply(
            ClientsAnswer(
                set: set, instances: instances.map { Self.clientInstance($0, capabilities: true) },
                silent: telemetry.silentConnections(set: set)))
    }

    /// An instance as the clients and propagation answers show it; `capabilities` and `enums` (when it reported
    /// some) only in the former, which `flagctl lint --against` judges by.
    static func clientInstance(_ instance: ClientTelemetry.Instance, capabilities: Bool) -> ClientInstance {
        let report = instance.report
        return ClientInstance(
            id: instance.stored.id, sdk: Software(name: report.sdk.name, version: report.sdk.version),
            app: report.app.map { Software(name: $0.name, version: $0.version) }, version: report.version,
            appliedAt: report.appliedAt, lastSeen: instance.stored.lastSeen,
            capabilities: capabilities
                ? Capabilities(
                    schema: report.capabilities.schema, operators: report.capabilities.operators.sorted(by: utf8Less))
                : nil,
            enums: capabilities && !report.enums.isEmpty
                ? report.enums.mapValues { KnownValues(values: $0.values, default: $0.defaultValue) } : nil)
    }

    /// `GET /v1/admin/sets/{set}/usage?key=&days=`: evaluations per flag and day (UTC), the variants served, when
    /// each flag was last evaluated, and the active instances by SDK version.
    func usage(_ call: Call, _ query: UsageQuery) throws -> Reply<UsageAnswer> {
        let state = try requireState(call)
        let key = query.key
        if let key, state.compiled.flag(key) == nil {
            throw ServiceError.notFound("no flag \"\(key)\" in set \"\(state.name)\"", path: "key", subject: .flag)
        }
        let days = query.days ?? 30
        let retention = service.telemetry.limits.retentionDays
        guard (1...retention).contains(days) else {
            throw ServiceError.badRequest("days must be from 1 to \(retention), not \(days)", path: "days")
        }
        let now = clock.now()
        let today = ClientTelemetry.hour(of: now) / 24
        let telemetry = service.telemetry
        telemetry.flush()
        let (counts, active) = try service.storeCall {
            let counts = try service.store.telemetry.usage(
                set: state.name, flag: key, fromHour: (today - days + 1) * 24)
            let active = try telemetry.instances(set: state.name, within: telemetry.limits.activeWindow)
            return (counts, active)
        }
        // flag → day → (evaluations, variant → count), and when each flag was last evaluated.
        var byFlag: [String: [Int: (total: Int, variants: [String: Int])]] = [:]
        var last: [String: Date] = [:]
        for count in counts {
            var day = byFlag[count.flag]?[count.hour / 24] ?? (0, [:])
            day.total += count.count
            day.variants[count.variant, default: 0] += count.count
            byFlag[count.flag, default: [:]][count.hour / 24] = day
            last[count.flag] = max(last[count.flag] ?? count.lastAt, count.lastAt)
        }
        let keys = key.map { [$0] } ?? state.compiled.readableFlags.map(\.key).sorted()
        var sdks: [TelemetryReport.Software: Int] = [:]
        for instance in active { sdks[instance.report.sdk, default: 0] += 1 }
        let flags = keys.map { flag in
            FlagUsage(
                key: flag, lastEvaluated: last[flag],
                days: (byFlag[flag] ?? [:]).sorted(by: { $0.key < $1.key }).map { day, entry in
                    DayUsage(
                        day: String(ISO8601.format(Date(timeIntervalSince1970: Double(day) * 86_400)).prefix(10)),
                        evaluations: entry.total, variants: entry.variants)
                })
        }
        let byVersion = sdks.sorted(by: { ($0.key.name, $0.key.version) < ($1.key.name, $1.key.version) })
        let answer = UsageAnswer(
            set: state.name, days: days, flags: flags,
            sdks: byVersion.map { SDKInstances(name: $0.key.name, version: $0.key.version, instances: $0.value) })
        return Reply(answer)
    }

    /// `GET /v1/admin/sets/{set}/versions/{n}/propagation`: how many active instances report version `n` or
    /// later, how long it took them on the server's clock, this server's fan-out of it, and who lags.
    func propagation(_ call: Call) throws -> Reply<PropagationAnswer> {
        let state = try requireState(call)
        let text = call.parameters.version
        guard let version = Int(text), version >= 1, version <= state.version else {
            throw ServiceError.notFound(
                "set \"\(state.name)\" has no version \(text); its versions run from 1 to \(state.version)", path: "n",
                subject: .version)
        }
        let telemetry = service.telemetry
        let fanout = service.fanouts.fanout(set: state.name, version: version)
        telemetry.flush()
        let (active, committedAt) = try service.storeCall {
            let active = try telemetry.instances(set: state.name, within: telemetry.limits.activeWindow)
            let committedAt = try fanout?.committedAt ?? service.store.version(set: state.name, version).createdAt
            return (active, committedAt)
        }
        let propagation = Propagation(version: version, committedAt: committedAt, active: active)
        let answer = PropagationAnswer(
            set: state.name, version: version, active: active.count, applied: propagation.applied,
            p50Ms: propagation.percentile(0.5), p99Ms: propagation.percentile(0.99),
            written: fanout.map { Fanout(streams: $0.streams, ms: ($0.milliseconds * 10).rounded() / 10) },
            silent: telemetry.silentConnections(set: state.name),
            lagging: propagation.lagging.prefix(100).map { Self.clientInstance($0, capabilities: false) })
        return Reply(answer)
    }

    /// `GET /v1/admin/sets/{set}/settings`.
    func settings(_ call: Call) throws -> Reply<SettingsAnswer> {
        let set = try requireState(call).name
        return Reply(Self.answer(set, try service.settings(set)))
    }

    /// The settings as the API shows them.
    static func answer(_ set: String, _ settings: SetSettings) -> SettingsAnswer {
        SettingsAnswer(set: set, compatibility: settings.compatibility.rawValue, reviews: settings.reviews.rawValue)
    }

    /// `PUT /v1/admin/sets/{set}/settings`: `{"compatibility": "enforce"|"warn"|"off", "reviews": "off"|"required"}`;
    /// members not given keep their value.
    func updateSettings(_ call: Call, _ request: SettingsRequest) throws -> Reply<SettingsAnswer> {
        let set = try requireState(call).name
        var settings = try service.settings(set)
        if let text = request.compatibility {
            guard let mode = SetSettings.Compatibility(rawValue: text) else {
                let modes = SetSettings.Compatibility.allCases.map(\.rawValue).joined(separator: ", ")
                throw ServiceError.badRequest(
                    "compatibility must be one of \(modes), not \"\(text)\"", path: "compatibility")
            }
            settings.compatibility = mode
        }
        if let text = request.reviews {
            guard let mode = SetSettings.Reviews(rawValue: text) else {
                let modes = SetSettings.Reviews.allCases.map(\.rawValue).joined(separator: ", ")
                throw ServiceError.badRequest("reviews must be one of \(modes), not \"\(text)\"", path: "reviews")
            }
            settings.reviews = mode
        }
        let audit = AuditEntry(
            time: clock.now(), actor: call.actor, action: "set.settings",
            subject: "compatibility=\(settings.compatibility.rawValue) reviews=\(settings.reviews.rawValue)",
            reason: request.reason)
        try service.storeCall { try service.store.settings.update(set: set, settings, audit: audit) }
        return Reply(Self.answer(set, settings))
    }
}

/// How far one version has reached the active instances: who has applied it, how long each took on the server's
/// clock (from the commit, or the instance's first appearance if later, to the first report at the version or
/// after), and who lags.
struct Propagation {
    let applied: Int
    /// Milliseconds per applied instance, sorted.
    let delays: [Int]
    /// Active instances below the version, oldest report first.
    let lagging: [ClientTelemetry.Instance]

    init(version: Int, committedAt: Date, active: [ClientTelemetry.Instance]) {
        var delays: [Int] = []
        var lagging: [ClientTelemetry.Instance] = []
        var applied = 0
        for instance in active {
            guard let reported = instance.report.version, reported >= version else {
                lagging.append(instance)
                continue
            }
            applied += 1
            let seen = instance.stored.applied.filter { $0.key >= version }.map(\.value).min()
            if let seen {
                let start = max(committedAt, instance.stored.firstSeen)
                delays.append(max(0, Int((seen.timeIntervalSince(start) * 1000).rounded())))
            }
        }
        self.applied = applied
        self.delays = delays.sorted()
        self.lagging = lagging.sorted { $0.stored.lastSeen < $1.stored.lastSeen }
    }

    /// The nearest-rank percentile of the delays, `nil` without any.
    func percentile(_ fraction: Double) -> Int? {
        guard !delays.isEmpty else { return nil }
        let rank = Int((fraction * Double(delays.count)).rounded(.up))
        return delays[min(delays.count, max(1, rank)) - 1]
    }
}
