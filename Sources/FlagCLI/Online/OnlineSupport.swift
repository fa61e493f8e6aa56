import FlagAPI
import FlagCore
import Foundation

/// What every command that writes a version of a set accepts: `--reason S`, `--if-match N`, `--wait PERCENT`,
/// `--wait-timeout DURATION` and `--force`.
struct Mutation {
    /// Why, for the history.
    let reason: String?
    /// The version the set must still be at.
    let ifMatch: Int?
    /// Whether to wait for the new version to reach the clients, and how long.
    let wait: WaitRequest?
    /// Write even what active clients cannot evaluate (`allowIncompatible=true`).
    let force: Bool
    /// `--propose TITLE [--at TIME]` (a change request instead of a write) or `--without-review REASON`.
    let review: ReviewChoice?
    /// The zone the command line's times are read and shown in.
    let timeZone: TimeZone

    /// `--reason` and `--if-match`: what the history records and the version guard.
    static let recordOptions: [Option] = [
        .value("reason", "S", help: "why, recorded in the history"),
        .value("if-match", "N", help: "change only if the set is still at version N (else exit 3)"),
    ]

    /// The option declarations of a command that makes a set: it writes a version that no review holds back.
    static let creationOptions: [Option] =
        recordOptions + WaitRequest.options + [
            .flag("force", help: "write it even if active clients cannot evaluate it (the compatibility gate)")
        ]

    /// The option declarations of a command that writes a version of a set, which may be proposed instead.
    static let options: [Option] = creationOptions + reviewOptions(schedule: "at")

    /// `--propose`, its time (`--at`, unless the command has an `--at` of its own), and `--without-review`.
    static func reviewOptions(schedule: String) -> [Option] {
        [
            .value("propose", "TITLE", help: "make a change request another person approves, instead of writing"),
            .value(
                schedule, "TIME",
                help: "with --propose: when the server applies it (2026-12-07T09:00:00Z, +2h, tomorrow 09:00)"),
            .value(
                "without-review", "REASON",
                help: "write at once on a set that requires reviews (an admin not limited to sets)"),
        ]
    }

    /// Reads and checks the options (those a command does not declare are absent); `schedule` is the name of the
    /// option that gives a change request its time.
    init(_ arguments: ParsedArguments, schedule: String = "at") throws(CLIError) {
        timeZone = arguments.timeZone
        reason = arguments.value("reason")
        if let text = arguments.value("if-match") {
            guard let version = Int(text), version >= 1 else {
                throw arguments.usageError("--if-match needs a version number, not '\(text)'")
            }
            ifMatch = version
        } else {
            ifMatch = nil
        }
        wait = try WaitRequest.parse(arguments)
        force = arguments.flag("force")
        let at = try arguments.value(schedule).map { text throws(CLIError) in
            try Typed.when(text, option: schedule, arguments)
        }
        switch (arguments.value("propose"), arguments.value("without-review")) {
        case (let title?, nil):
            guard !title.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw arguments.usageError("--propose needs a title, e.g. --propose 'Turn the sale banner on'")
            }
            guard wait == nil else {
                throw arguments.usageError("--wait cannot go with --propose: nothing is written until it is applied")
            }
            review = .propose(title, at: at)
        case (_, _) where at != nil:
            throw arguments.usageError("--\(schedule) schedules a change request: it goes with --propose TITLE")
        case (nil, let reason?): review = .withoutReview(reason)
        case (nil, nil): review = nil
        case (_?, _?): throw arguments.usageError("--propose and --without-review cannot be used together")
        }
    }

    /// The request of an action that only says why: `--reason`, and `allowIncompatible` for `--force`.
    var changeRequest: ChangeRequest {
        ChangeRequest(reason: reason, allowIncompatible: forced)
    }

    /// A request's `allowIncompatible`: `true` for `--force`, else left out.
    var forced: Bool? { force ? true : nil }
}

extension Option {
    /// `--reason S` of a command whose change the audit log records (not a version's history).
    static let auditReason = Option.value("reason", "S", help: "why, recorded in the audit log")
}

extension CommandConfiguration {
    /// A command that does one thing to what `positional` names (a token, a webhook, a signing key, a change
    /// request), with `--reason` for the audit log: `NAME [--reason S]`.
    static func step(_ name: String, on positional: Positional, abstract: String, example: String) -> Self {
        CommandConfiguration(
            name: name, abstract: abstract, synopsis: "\(positional.name) [--reason S]", positionals: [positional],
            options: [.auditReason], example: example)
    }
}

/// A command whose arguments are the positional that names what it writes (a set, an SDK key) and the `Mutation`
/// options.
protocol NamedWriteCommand: Command {
    init(name: String, mutation: Mutation)
}

extension NamedWriteCommand {
    /// Takes the name and the options.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        self.init(name: arguments.positionals[0], mutation: try Mutation(arguments))
    }
}

/// Values, times and conditions as typed on the command line.
enum Typed {
    /// Parses `text` as a value of the flag type `type` (`true`, `42`, `1.5`, plain strings, JSON for json).
    static func value(_ text: String, type: String, for what: String) throws(CLIError) -> JSONValue {
        do {
            return try FlagType(name: type).value(fromText: text)
        } catch {
            throw .failure("\(what): \(error.message)")
        }
    }

    /// An ISO-8601 time or a plain date (midnight UTC), for `--expires`, `--at`, `--start`.
    static func date(_ text: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> Date {
        do {
            return try ISO8601.date(from: text)
        } catch {
            throw arguments.usageError(
                "--\(option) '\(text)' is not a date: \(error.message); use 2026-12-01 or 2026-12-01T09:00:00Z")
        }
    }

    /// A time to come: RFC 3339 (`2026-12-07T09:00:00+01:00`), `+DURATION` from now (`+2h`, `+1d`), or
    /// `today HH:MM` / `tomorrow HH:MM` in the zone of the command line (`TZ`).
    static func when(_ text: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> Date {
        let now = arguments.readAt
        let forms = "use 2026-12-07T09:00:00Z, +2h or tomorrow 09:00"
        let date: Date
        if text.hasPrefix("+") {
            date = now.addingTimeInterval(Double(try duration(String(text.dropFirst()), option: option, arguments)))
        } else if let day = ["today": 0, "tomorrow": 1][String(text.prefix { $0 != " " })] {
            let clock = text.drop { $0 != " " }.trimmingCharacters(in: .whitespaces).split(separator: ":")
            guard clock.count == 2, let hour = Int(clock[0]), let minute = Int(clock[1]), (0..<24).contains(hour),
                (0..<60).contains(minute)
            else { throw arguments.usageError("--\(option) '\(text)' needs a time of day as HH:MM; \(forms)") }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = arguments.timeZone
            let start = calendar.startOfDay(for: now)
            guard let base = calendar.date(byAdding: .day, value: day, to: start),
                let local = calendar.date(bySettingHour: hour, minute: minute, second: 0, of: base)
            else {
                throw arguments.usageError("--\(option) '\(text)' is not a time in \(arguments.timeZone.identifier)")
            }
            date = local
        } else {
            do {
                date = try ISO8601.date(from: text)
            } catch {
                throw arguments.usageError("--\(option) '\(text)' is not a time: \(error.message); \(forms)")
            }
        }
        guard date > now else {
            throw arguments.usageError(
                "--\(option) \(Shown.local(date, arguments.timeZone)) is not in the future; \(forms)")
        }
        return date
    }

    /// A duration such as `2h` or `6w`, in seconds.
    static func duration(_ text: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> Int {
        do {
            return try DurationText.parse(text)
        } catch {
            throw arguments.usageError("--\(option) '\(text)' is not a duration: \(error.message)")
        }
    }

    /// `ATTRIBUTE OP VALUE[,VALUE]` → `{"attribute","op","values"}`.
    static func condition(_ text: String, _ arguments: ParsedArguments) throws(CLIError) -> JSONValue {
        let words = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard words.count == 3 else {
            throw arguments.usageError(
                "--where '\(text)' needs the form 'ATTRIBUTE OP VALUE[,VALUE]', e.g. 'country in DE,AT'")
        }
        let op = Operator(name: String(words[1]))
        if !Operator.conditions.contains(op) {
            throw arguments.usageError(
                "--where '\(text)': unknown operator '\(op.name)'; use "
                    + Vocabulary.choices(Operator.conditions.map(\.name)))
        }
        let values = words[2].split(separator: ",").map { JSONValue.string(String($0)) }
        return .object([
            "attribute": .string(String(words[0])), "op": .string(String(words[1])), "values": .array(values),
        ])
    }

    /// A percent from 0 to 100.
    static func percent(_ text: String, _ arguments: ParsedArguments) throws(CLIError) -> Double {
        guard let percent = Double(text), percent >= 0, percent <= 100 else {
            throw arguments.usageError("--percent needs a number from 0 to 100, not '\(text)'")
        }
        return percent
    }
}

/// Times and durations as people read them.
enum Shown {
    /// `2026-12-01 09:00 UTC`
    static func date(_ date: Date) -> String {
        let iso = ISO8601.format(date)  // 2026-12-01T09:00:00Z
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5)) + " UTC"
    }

    /// `2026-12-07 10:00 Europe/Berlin (09:00 UTC)`: a time in `zone` and in UTC; just UTC where the zone is at UTC.
    static func local(_ date: Date, _ zone: TimeZone) -> String {
        let utc = Self.date(date)
        guard zone.secondsFromGMT(for: date) != 0 else { return utc }
        let name = zone.identifier
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return
            "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) \(name) "
            + "(\(utc.dropFirst(11).dropLast(4)) UTC)"
    }

    /// `in 5 days`, `3 hours ago`, `now`.
    static func relative(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now).rounded())
        let size = abs(seconds)
        let text: String
        switch size {
        case ..<60: return "now"
        case ..<3600: text = counted(size / 60, "minute")
        case ..<86_400: text = counted((size + 1800) / 3600, "hour")
        default: text = counted((size + 43_200) / 86_400, "day")
        }
        return seconds > 0 ? "in \(text)" : "\(text) ago"
    }

    /// `2026-12-01 09:00 UTC (in 5 days)`, or `-` for none.
    static func when(_ value: JSONValue, now: Date) -> String {
        when(value.date, now: now)
    }

    /// `2026-12-01 09:00 UTC (in 5 days)`, or `-` without a date.
    static func when(_ date: Date?, now: Date) -> String {
        guard let date else { return "-" }
        return "\(Shown.date(date)) (\(relative(date, now: now)))"
    }

    /// `1%`, `12.5%`.
    static func percent(_ percent: Double) -> String {
        percent == percent.rounded() ? "\(Int(percent))%" : "\(percent)%"
    }
}

extension CommandContext {
    /// Prints the server's answer as one JSON line with `--json`, else `line` for people.
    func report(_ answer: AdminClient.Answer, _ line: @autoclosure () -> String) -> ExitCode {
        show(answer) { [line()] }
    }

    /// Prints the server's answer as one JSON line with `--json`, else the lines that `human` makes for people.
    @discardableResult
    func show<Failure>(_ answer: AdminClient.Answer, _ human: () throws(Failure) -> [String]) throws(Failure)
        -> ExitCode
    {
        if globals.json {
            console.print(answer.json.compactText)
        } else {
            for line in try human() { console.print(line) }
        }
        return .success
    }

    /// Prints the server's answer as one JSON line with `--json`, else the table that `human` makes, fitted to the
    /// help width.
    func showTable<Failure>(_ answer: AdminClient.Answer, _ human: () throws(Failure) -> Table) throws(Failure)
        -> ExitCode
    {
        try show(answer) { () throws(Failure) in try human().lines(fitting: Help.width) }
    }

    /// Prints a secret the server shows once (a token, an SDK key, a webhook's secret) alone on stdout, and `note`
    /// on stderr, so that `$(flagctl …)` captures the secret only; with `--json`, the server's answer.
    func showSecret(_ answer: AdminClient.Answer, _ secret: String, note: String) -> ExitCode {
        guard !globals.json else {
            console.print(answer.json.compactText)
            return .success
        }
        console.print(secret)
        console.printError(note)
        return .success
    }

    /// Prints a table fitted to the help width.
    func printTable(_ table: Table) {
        for line in table.lines(fitting: Help.width) { console.print(line) }
    }
}

extension AdminClient {
    /// A member the contract keeps as raw JSON (a flag, a cohort), parsed; `what` names it in the error.
    static func parsed(_ raw: RawJSON, _ what: String) throws(CLIError) -> JSONValue {
        do {
            return try raw.parsed()
        } catch {
            throw .failure("the server's \(what) cannot be read: \(error); is it a flagserver of this version?")
        }
    }

    /// Members the contract keeps as raw JSON by name (flags by key, cohorts by name), parsed; `kind` (`flag`,
    /// `cohort`) names one in the error.
    static func parsed(_ raws: [String: RawJSON], each kind: String) throws(CLIError) -> [String: JSONValue] {
        var parsed: [String: JSONValue] = [:]
        for (name, raw) in raws { parsed[name] = try Self.parsed(raw, "\(kind) \"\(name)\"") }
        return parsed
    }

    /// The flag a flag route wrote, from its mutation response.
    static func flag(of result: MutationResult) throws(CLIError) -> JSONValue {
        guard case .flag(let key, let json)? = result.item else {
            throw .failure("the server's answer names no flag; is it a flagserver of this version?")
        }
        return try parsed(RawJSON(bytes: json), "flag \"\(key)\"")
    }

    /// `(version 43)` or `(unchanged, still version 42)`.
    static func versionNote(_ result: MutationResult) -> String {
        result.changed ? "(version \(result.version))" : "(unchanged, still version \(result.version))"
    }
}

/// The names of FlagCore's vocabularies (types, kinds, operators) as flagctl accepts and lists them: always FlagCore's
/// own lists, so that the CLI cannot drift from what the server accepts.
enum Vocabulary {
    /// `a, b, c or d`.
    static func choices(_ names: [String]) -> String {
        guard let last = names.last else { return "" }
        return names.count == 1 ? last : names.dropLast().joined(separator: ", ") + " or " + last
    }

    /// The flag type `name`, or a usage error listing the types.
    static func type(_ name: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> FlagType {
        let type = FlagType(name: name)
        if case .unknown = type {
            throw arguments.usageError("unknown --\(option) '\(name)'; use \(choices(FlagType.known.map(\.name)))")
        }
        return type
    }

    /// The flag kind `name`, or a usage error listing the kinds.
    static func kind(_ name: String, option: String, _ arguments: ParsedArguments) throws(CLIError) -> FlagKind {
        let kind = FlagKind(name: name)
        if case .unknown = kind {
            throw arguments.usageError("unknown --\(option) '\(name)'; use \(choices(FlagKind.known.map(\.name)))")
        }
        return kind
    }
}
