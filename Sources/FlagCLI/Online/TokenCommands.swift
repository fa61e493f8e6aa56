import FlagAPI
import FlagCore

/// `flagctl tokens create NAME --role ROLE [--sets a,b] [--expires 90d]`: a named token of the admin API for a person
/// or an automation, printed this once.
package struct TokensCreateCommand: Command {
    /// `tokens create NAME`
    package static let configuration = CommandConfiguration(
        name: "tokens create", abstract: "Create a named token of the admin API with a role; prints it once.",
        synopsis: "NAME --role viewer|editor|admin [--sets a,b] [--expires 90d] [--reason S]",
        positionals: [Positional("NAME", help: "a name unique on the server: the person or the automation")],
        options: [
            .value("role", "ROLE", help: "viewer (reads), editor (changes flags and cohorts) or admin (everything)"),
            .value("sets", "A,B", help: "the only sets it may act on (default: every set)"),
            .value("expires", "DURATION", help: "how long it works, e.g. 90d (default: until revoked)"),
            .auditReason,
        ],
        example: "flagctl tokens create alice --role editor --sets staging --expires 90d")

    private let name: String
    private let role: String
    private let sets: [String]?
    private let expires: Int?
    private let reason: String?

    /// Takes the name, the role, the sets and the lifetime.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        guard let role = arguments.value("role") else {
            throw arguments.usageError("missing --role (\(Self.roles))")
        }
        guard Self.roleNames.contains(role) else {
            throw arguments.usageError("unknown --role '\(role)'; use \(Self.roles)")
        }
        self.role = role
        sets = arguments.value("sets").map { $0.split(separator: ",").map(String.init) }
        expires = try arguments.value("expires").map { text throws(CLIError) in
            try Typed.duration(text, option: "expires", arguments)
        }
        reason = arguments.value("reason")
    }

    static let roleNames = ["viewer", "editor", "admin"]
    static var roles: String { roleNames.joined(separator: ", ") }

    /// POSTs and prints the token.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let request = CreateTokenRequest(
            name: name, role: role, sets: sets, expires: expires.map(DurationText.format), reason: reason)
        let (created, answer) = try client.send(API.createToken, PathParameters(), request)
        let scope = sets.map { " on \($0.joined(separator: ", "))" } ?? ""
        let end = created.info.expiresAt.map { ", until \(Shown.date($0))" } ?? ""
        return context.showSecret(
            answer, created.token,
            note: "created token \(name) (\(role)\(scope)\(end)); it is shown only this once, hand it over now")
    }
}

/// `flagctl tokens list`: the tokens of the admin API, never their secrets.
package struct TokensListCommand: Command {
    /// `tokens list`
    package static let configuration = CommandConfiguration(
        name: "tokens list", abstract: "List the tokens of the admin API (never the tokens themselves).",
        synopsis: "", example: "flagctl tokens list")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  ROLE  SETS  CREATED  EXPIRES  LAST USED`; a session shows whose it is, a revoked token `revoked`.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (list, answer) = try client.send(API.listTokens, PathParameters(), NoRequest())
        return context.showTable(answer) {
            let now = context.now()
            var table = Table(header: ["NAME", "ROLE", "SETS", "CREATED", "EXPIRES", "LAST USED"])
            for token in list.tokens {
                var name = token.name
                if let person = token.sessionOf { name += " (session of \(person))" }
                let expires: String
                if let revoked = token.revokedAt {
                    expires = "revoked \(Shown.date(revoked))"
                } else if let end = token.expiresAt {
                    expires = end <= now ? "expired \(Shown.date(end))" : Shown.date(end)
                } else {
                    expires = "-"
                }
                table.append([
                    name, token.role, token.sets.map { $0.joined(separator: ",") } ?? "all",
                    Shown.date(token.createdAt),
                    expires, token.lastUsedAt.map { Shown.relative($0, now: now) } ?? "never",
                ])
            }
            return table
        }
    }
}

/// `flagctl tokens revoke NAME`: refused from the next request on, with the dashboard sessions made from it.
package struct TokensRevokeCommand: Command {
    /// `tokens revoke NAME`
    package static let configuration = CommandConfiguration.step(
        "tokens revoke", on: Positional("NAME", help: "the token's name"),
        abstract: "Revoke a token of the admin API and its dashboard sessions.",
        example: "flagctl tokens revoke alice --reason 'left the team'")

    private let name: String
    private let reason: String?

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        reason = arguments.value("reason")
    }

    /// DELETEs the token.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (_, answer) = try client.send(API.revokeToken, PathParameters(name: name), ChangeRequest(reason: reason))
        return context.report(answer, "revoked token \(name) and its sessions")
    }
}

/// `flagctl promote KEY --from A --to B [--with-cohorts] [--with-prerequisites]`: one flag's configuration from one
/// set into another.
package struct PromoteCommand: Command {
    /// `promote KEY`
    package static let configuration = CommandConfiguration(
        name: "promote", abstract: "Copy one flag's configuration from one set into another (staging → prod).",
        synopsis: "KEY --from A --to B [--with-cohorts] [--with-prerequisites] [--reason S]",
        positionals: [Positional("KEY", help: "the flag's key")],
        options: [
            .value("from", "A", help: "the set to copy from"),
            .value("to", "B", help: "the set to copy into (default: --set)"),
            .flag("with-cohorts", help: "also copy the cohorts it uses that the target lacks"),
            .flag("with-prerequisites", help: "also copy the flags it requires that the target lacks"),
        ] + Mutation.options,
        example: "flagctl promote new-checkout --from staging --to prod --reason 'verified on staging'")

    private let key: String
    private let from: String
    private let to: String?
    private let withCohorts: Bool
    private let withPrerequisites: Bool
    private let mutation: Mutation

    /// Takes the key and the two sets.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        key = arguments.positionals[0]
        guard let from = arguments.value("from") else { throw arguments.usageError("missing --from A") }
        self.from = from
        to = arguments.value("to")
        withCohorts = arguments.flag("with-cohorts")
        withPrerequisites = arguments.flag("with-prerequisites")
        mutation = try Mutation(arguments)
    }

    /// POSTs the promotion to the target set.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let target: String
        if let to { target = to } else { target = try client.requireSet(for: Self.configuration) }
        let request = PromoteRequest(
            from: from, withCohorts: withCohorts ? true : nil, withPrerequisites: withPrerequisites ? true : nil,
            reason: mutation.reason,
            allowIncompatible: mutation.forced)
        return try mutation.write(
            API.promote, PathParameters(set: target, key: key), request, set: target, client: client, context
        ) { result in
            ["promoted \(key) from \(from) to \(target) \(AdminClient.versionNote(result))"]
        }
    }
}
