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
    func clientsResponse(_ call: Call) throws -> HTTPResponse {
        let set = try requireState(call).name
        let telemetry = service.telemetry
        let expiry = Int(telemetry.limits.expiry)
        let within = try RequestInput(call.request).int("within") ?? expiry
        guard (1...expiry).contains(within) else {
            throw ServiceError.badRequest("within must be from 1 to \(expiry) seconds, not \(within)", path: "within")
        }
        telemetry.flush()
        let instances = try service.storeCall { try telemetry.instances(set: set, within: TimeInterval(within)) }
        return JSONResponse.object(capacity: 64 + 400 * instances.count) { writer in
            writer.member("set", set)
            writer.key("instances")
            writer.beginArray()
            for instance in instances {
                writer.beginObject()
                Self.writeInstanceMembers(instance, to: &writer)
                writer.key("capabilities")
                instance.report.capabilities.write(to: &writer)
                writer.endObject()
            }
            writer.endArray()
            writer.member("silent", telemetry.silentConnections(set: set))
        }
    }

    /// `id`, `sdk`, `app`, `version`, `appliedAt` and `lastSeen` of an instance.
    static func writeInstanceMembers(_ instance: ClientTelemetry.Instance, to writer: inout JSONWriter) {
        let report = instance.report
        writer.member("id", instance.stored.id)
        writer.key("sdk")
        report.sdk.write(to: &writer)
        writer.key("app")
        if let app = report.app { app.write(to: &writer) } else { writer.null() }
        writer.key("version")
        if let version = report.version { writer.int(version) } else { writer.null() }
        writer.key("appliedAt")
        if let appliedAt = report.appliedAt { writer.string(ISO8601.format(appliedAt)) } else { writer.null() }
        writer.member("lastSeen", instance.stored.lastSeen)
    }

    /// `GET /v1/admin/sets/{set}/usage?key=&days=`: evaluations per flag and day (UTC), the variants served, when
    /// each flag was last evaluated, and the active instances by SDK version.
    func usageResponse(_ call: Call) throws -> HTTPResponse {
        let state = try requireState(call)
        let input = try RequestInput(call.request)
        let key = try input.string("key")
        if let key, state.compiled.flag(key) == nil {
            throw ServiceError.notFound("no flag \"\(key)\" in set \"\(state.name)\"", path: "key", subject: .flag)
        }
        let days = try input.int("days") ?? 30
        let retention = service.telemetry.limits.retentionDays
        guard (1...retention).contains(days) else {
            throw ServiceError.badRequest("days must be from 1 to \(retention), not \(days)", path: "days")
        }
        let now = clock.now()
        let today = ClientTelemetry.hour(of: now) / 24
        let telemetry = service.telemetry
        telemetry.flush()
        let (counts, active) = try service.storeCall {
            let counts = try service.store.usage(set: state.name, flag: key, fromHour: (today - days + 1) * 24)
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
        return JSONResponse.object(capacity: 128 + 96 * keys.count) { writer in
            writer.member("set", state.name)
            writer.member("days", days)
            writer.key("flags")
            writer.beginArray()
            for flag in keys {
                writer.beginObject()
                writer.member("key", flag)
                writer.key("lastEvaluated")
                if let date = last[flag] { writer.string(ISO8601.format(date)) } else { writer.null() }
                writer.key("days")
                writer.beginArray()
                for (day, entry) in (byFlag[flag] ?? [:]).sorted(by: { $0.key < $1.key }) {
                    writer.beginObject()
                    writer.member(
                        "day", String(ISO8601.format(Date(timeIntervalSince1970: Double(day) * 86_400)).prefix(10)))
                    writer.member("evaluations", entry.total)
                    writer.key("variants")
                    writer.beginObject()
                    for (variant, count) in entry.variants.sorted(by: { $0.key < $1.key }) {
                        writer.key(variant)
                        writer.int(count)
                    }
                    writer.endObject()
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
            writer.key("sdks")
            writer.beginArray()
            for (sdk, count) in sdks.sorted(by: { ($0.key.name, $0.key.version) < ($1.key.name, $1.key.version) }) {
                writer.beginObject()
                writer.member("name", sdk.name)
                writer.member("version", sdk.version)
                writer.member("instances", count)
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// `GET /v1/admin/sets/{set}/versions/{n}/propagation`: how many active instances report version `n` or
    /// later, how long it took them on the server's clock, this server's fan-out of it, and who lags.
    func propagationResponse(_ call: Call) throws -> HTTPResponse {
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
        return JSONResponse.object(capacity: 256 + 200 * propagation.lagging.count) { writer in
            writer.member("set", state.name)
            writer.member("version", version)
            writer.member("active", active.count)
            writer.member("applied", propagation.applied)
            writer.key("p50Ms")
            if let p50 = propagation.percentile(0.5) { writer.int(p50) } else { writer.null() }
            writer.key("p99Ms")
            if let p99 = propagation.percentile(0.99) { writer.int(p99) } else { writer.null() }
            writer.key("written")
            if let fanout {
                writer.beginObject()
                writer.member("streams", fanout.streams)
                writer.key("ms")
                writer.double((fanout.milliseconds * 10).rounded() / 10)
                writer.endObject()
            } else {
                writer.null()
            }
            writer.member("silent", telemetry.silentConnections(set: state.name))
            writer.key("lagging")
            writer.beginArray()
            for instance in propagation.lagging.prefix(100) {
                writer.beginObject()
                Self.writeInstanceMembers(instance, to: &writer)
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// `GET /v1/admin/sets/{set}/settings`.
    func settingsResponse(_ call: Call) throws -> HTTPResponse {
        let set = try requireState(call).name
        let settings = try service.storeCall { try service.store.settings(set: set) }
        return Self.settingsAnswer(set, settings)
    }

    /// `PUT /v1/admin/sets/{set}/settings`: `{"compatibility": "enforce"|"warn"|"off"}`; members not given keep
    /// their value.
    func updateSettings(_ call: Call) throws -> HTTPResponse {
        let set = try requireState(call).name
        let input = try RequestInput(call.request)
        var settings = try service.storeCall { try service.store.settings(set: set) }
        if let text = try input.string("compatibility") {
            guard let mode = SetSettings.Compatibility(rawValue: text) else {
                let modes = SetSettings.Compatibility.allCases.map(\.rawValue).joined(separator: ", ")
                throw ServiceError.badRequest(
                    "compatibility must be one of \(modes), not \"\(text)\"", path: "compatibility")
            }
            settings.compatibility = mode
        }
        let audit = AuditRecord(
            actor: call.actor, action: "set.settings", reason: try input.reason(),
            subject: "compatibility=\(settings.compatibility.rawValue)", time: clock.now())
        try service.storeCall { try service.store.updateSettings(set: set, settings, audit: audit) }
        return Self.settingsAnswer(set, settings)
    }

    private static func settingsAnswer(_ set: String, _ settings: SetSettings) -> HTTPResponse {
        JSONResponse.object { writer in
            writer.member("set", set)
            writer.member("compatibility", settings.compatibility.rawValue)
        }
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
