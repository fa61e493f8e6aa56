import FlagAPI
import FlagCore
import Foundation

/// `flagctl changes list [--state open,approved]`: the set's change requests, newest first (docs/reviews.md).
package struct ChangesListCommand: Command {
    /// `changes list`
    package static let configuration = CommandConfiguration(
        name: "changes list", abstract: "List the set's change requests, newest first.",
        synopsis: "[--state open,approved] [--limit N]",
        options: [
            .value("state", "S,S", help: "only these: open, approved, applied, rejected, withdrawn, failed"),
            .value("limit", "N", help: "at most N (default 100)"),
        ],
        example: "flagctl --set ios-prod changes list --state open")

    private let query: ChangeListQuery

    /// Takes the filters.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        var limit: Int?
        if let text = arguments.value("limit") {
            guard let number = Int(text), number >= 1 else {
                throw arguments.usageError("--limit needs a positive number, not '\(text)'")
            }
            limit = number
        }
        query = ChangeListQuery(state: arguments.value("state"), limit: limit)
    }

    /// `ID  STATE  TITLE  AUTHOR  APPROVED BY  PROPOSED  APPLIES`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (list, answer) = try client.send(API.listChanges, PathParameters(set: set), query)
        return context.showTable(answer) {
            var table = Table(header: ["ID", "STATE", "TITLE", "AUTHOR", "APPROVED BY", "PROPOSED", "APPLIES"])
            for change in list.changes {
                let approvers = change.approvals.map(\.actor).joined(separator: ", ")
                table.append([
                    String(change.id), change.state, change.title, change.author, approvers.isEmpty ? "-" : approvers,
                    Shown.when(change.createdAt, now: context.now()), change.applyAt.map(Shown.date) ?? "-",
                ])
            }
            return table
        }
    }
}

/// `flagctl changes show ID`: one change request, and what it changes now.
package struct ChangesShowCommand: Command {
    /// `changes show ID`
    package static let configuration = CommandConfiguration(
        name: "changes show", abstract: "Show a change request and its diff against the current version.",
        synopsis: "ID", positionals: [Positional("ID", help: "the change request's number")],
        example: "flagctl --set ios-prod changes show 12")

    private let id: Int

    /// Takes the id.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        id = try ChangeText.id(arguments)
    }

    /// `field: value` lines, then the diff.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (shown, answer) = try client.send(API.getChange, PathParameters(set: set, version: id), NoRequest())
        return try context.show(answer) { () throws(CLIError) in
            try ChangeText.lines(shown, now: context.now())
        }
    }
}

/// The commands that decide on a change request: approve, reject, apply, withdraw.
protocol ChangeDecisionCommand: Command {
    /// The decision's endpoint, e.g. `API.approveChange`.
    static var endpoint: Endpoint<ChangeRequest, ChangeInfo> { get }
    var id: Int { get }
    var reason: String? { get }
    init(id: Int, reason: String?)
}

extension ChangeDecisionCommand {
    /// The declaration shared by these commands.
    static func decision(_ verb: String, abstract: String) -> CommandConfiguration {
        .step(
            "changes \(verb)", on: Positional("ID", help: "the change request's number"), abstract: abstract,
            example: "flagctl --set ios-prod changes \(verb) 12 --reason 'checked on staging'")
    }

    /// Takes the id and the reason.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        self.init(id: try ChangeText.id(arguments), reason: arguments.value("reason"))
    }

    /// Sends the decision and prints where the request is now.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (change, answer) = try client.send(
            Self.endpoint, PathParameters(set: set, version: id), ChangeRequest(reason: reason))
        let version = change.appliedVersion.map { ", as version \($0)" } ?? ""
        return context.report(answer, "change request \(id) (\(change.title)) is \(change.state)\(version)")
    }
}

/// `flagctl changes approve ID`: by another person than its author.
package struct ChangesApproveCommand: ChangeDecisionCommand {
    /// `changes approve ID`
    package static let configuration = decision("approve", abstract: "Approve another person's change request.")
    static let endpoint = API.approveChange
    let id: Int
    let reason: String?
}

/// `flagctl changes reject ID`.
package struct ChangesRejectCommand: ChangeDecisionCommand {
    /// `changes reject ID`
    package static let configuration = decision("reject", abstract: "Reject a change request.")
    static let endpoint = API.rejectChange
    let id: Int
    let reason: String?
}

/// `flagctl changes schedule ID --at TIME`: when the server applies it.
package struct ChangesScheduleCommand: Command {
    /// `changes schedule ID`
    package static let configuration = CommandConfiguration(
        name: "changes schedule", abstract: "Give a change request the time at which the server applies it.",
        synopsis: "ID --at TIME [--reason S]", positionals: [Positional("ID", help: "the change request's number")],
        options: [
            .value("at", "TIME", help: "when: 2026-12-07T09:00:00Z, +2h or tomorrow 09:00 (in $TZ)"),
            .auditReason,
        ],
        example: "flagctl --set ios-prod changes schedule 12 --at 'tomorrow 09:00'")

    private let id: Int
    private let at: Date
    private let reason: String?
    private let timeZone: TimeZone

    /// Takes the id and the time.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        id = try ChangeText.id(arguments)
        guard let text = arguments.value("at") else { throw arguments.usageError("missing --at TIME") }
        at = try Typed.when(text, option: "at", arguments)
        reason = arguments.value("reason")
        timeZone = arguments.timeZone
    }

    /// POSTs the time.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (change, answer) = try client.send(
            API.scheduleChange, PathParameters(set: set, version: id), ScheduleRequest(at: at, reason: reason))
        return context.report(
            answer,
            "change request \(id) (\(change.title)) is \(change.state), to apply at \(Shown.local(at, timeZone))")
    }
}

/// `flagctl changes apply ID`: one new version.
package struct ChangesApplyCommand: ChangeDecisionCommand {
    /// `changes apply ID`
    package static let configuration = decision("apply", abstract: "Write an approved change request as a version.")
    static let endpoint = API.applyChange
    let id: Int
    let reason: String?
}

/// `flagctl changes withdraw ID`: by its author or an admin.
package struct ChangesWithdrawCommand: ChangeDecisionCommand {
    /// `changes withdraw ID`
    package static let configuration = decision("withdraw", abstract: "Withdraw a change request.")
    static let endpoint = API.withdrawChange
    let id: Int
    let reason: String?
}

/// How a change request reads for people.
enum ChangeText {
    /// The positional `ID`, a positive number.
    static func id(_ arguments: ParsedArguments) throws(CLIError) -> Int {
        let text = arguments.positionals[0]
        guard let id = Int(text), id >= 1 else {
            throw arguments.usageError("ID is a change request's number (changes list), not '\(text)'")
        }
        return id
    }

    /// The request's fields, its conflicts, and each item as it is now and as the request writes it.
    static func lines(_ shown: ChangeAnswer, now: Date) throws(CLIError) -> [String] {
        let change = shown.change
        var lines = [
            "change request \(change.id): \(change.title)",
            "state:       \(change.state)" + (change.failure.map { " (\($0))" } ?? ""),
            "proposed:    by \(change.author), \(Shown.when(change.createdAt, now: now)), on version "
                + "\(change.baseVersion) (now \(shown.currentVersion))",
        ]
        if let reason = change.reason { lines.append("reason:      \(reason)") }
        if let at = change.applyAt { lines.append("applies at:  \(Shown.date(at)) (\(Shown.relative(at, now: now)))") }
        for approval in change.approvals {
            let why = approval.reason.map { ": \($0)" } ?? ""
            lines.append("approved:    by \(approval.actor), \(Shown.when(approval.time, now: now))\(why)")
        }
        if let actor = change.decidedBy, let time = change.decidedAt {
            let version = change.appliedVersion.map { " as version \($0)" } ?? ""
            let why = change.decisionReason.map { ": \($0)" } ?? ""
            lines.append("decided:     \(change.state) by \(actor), \(Shown.when(time, now: now))\(version)\(why)")
        }
        if !shown.conflicts.isEmpty {
            let items = shown.conflicts.map { "\($0.kind) \($0.key)" }.joined(separator: ", ")
            lines.append("conflicts:   \(items) changed since version \(change.baseVersion); it cannot be applied")
        }
        let diff = try DiffText.lines(flags: shown.flags, cohorts: shown.cohorts)
        lines.append("")
        lines += diff.isEmpty ? ["it changes nothing the current version does not have already"] : diff
        return lines
    }
}
