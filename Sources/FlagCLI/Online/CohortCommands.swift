import FlagAPI
import FlagCore
import Foundation

/// `flagctl cohort create NAME [--units a,b] [--where COND]...`: a named group of units.
package struct CohortCreateCommand: Command {
    /// `cohort create NAME …`
    package static let configuration = CommandConfiguration(
        name: "cohort create", abstract: "Create (or replace) a cohort: listed units and/or a condition group.",
        synopsis: "NAME [--units a,b] [--where COND]... [--description S]",
        positionals: [Positional("NAME", help: "the cohort's name")],
        options: [
            .value("units", "a,b", help: "unit ids always in the cohort"),
            .repeated("where", "COND", help: "'ATTRIBUTE OP VALUE[,VALUE]'; several must all match"),
            .value("description", "S", help: "who is in it"),
        ] + Mutation.options,
        example: "flagctl cohort create beta --units u-1,u-2 --where 'appVersion semver_gte 5.2.0'")

    private let name: String
    private let cohort: JSONValue
    private let mutation: Mutation

    /// Builds the cohort; one of `--units`/`--where` is needed.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        var members: [String: JSONValue] = [:]
        if let units = arguments.value("units") {
            let ids = units.split(separator: ",").map { JSONValue.string(String($0)) }
            guard !ids.isEmpty else { throw arguments.usageError("--units needs ids, e.g. u-1,u-2") }
            members["include"] = .array(ids)
        }
        var conditions: [JSONValue] = []
        for text in arguments.values("where") { conditions.append(try Typed.condition(text, arguments)) }
        if !conditions.isEmpty { members["groups"] = .array([.array(conditions)]) }
        guard !members.isEmpty else { throw arguments.usageError("give --units a,b and/or --where COND") }
        if let description = arguments.value("description") { members["description"] = .string(description) }
        cohort = .object(members)
        mutation = try Mutation(arguments)
    }

    /// PUTs the cohort.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let request = PutCohortRequest(
            cohort: RawJSON(cohort), reason: mutation.reason, allowIncompatible: mutation.forced)
        let (result, answer) = try client.send(
            API.putCohort, PathParameters(set: set, name: name), request, ifMatch: mutation.ifMatch,
            review: mutation.review)
        let verb = answer.status == 201 ? "created" : "replaced"
        return try mutation.finish(result, answer, set: set, client: client, context) {
            ["\(verb) cohort \(name) \(AdminClient.versionNote(result))"]
        }
    }
}

/// `flagctl cohort list`.
package struct CohortListCommand: Command {
    /// `cohort list`
    package static let configuration = CommandConfiguration(
        name: "cohort list", abstract: "List the cohorts of a set.", synopsis: "", example: "flagctl cohort list")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  UNITS  CONDITIONS  DESCRIPTION`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (list, answer) = try client.send(API.listCohorts, PathParameters(set: set), NoRequest())
        return try context.showTable(answer) { () throws(CLIError) in
            let cohorts = try AdminClient.parsed(list.cohorts, each: "cohort")
            return Table(
                header: ["NAME", "UNITS", "CONDITIONS", "DESCRIPTION"], rows: cohorts.sorted { $0.key < $1.key }
            ) {
                name, cohort in
                [
                    name, String(cohort["include"].array?.count ?? 0), CohortText.conditions(cohort),
                    cohort["description"].string ?? "",
                ]
            }
        }
    }
}

/// `flagctl cohort show NAME`.
package struct CohortShowCommand: Command {
    /// `cohort show NAME`
    package static let configuration = CommandConfiguration(
        name: "cohort show", abstract: "Show one cohort.", synopsis: "NAME",
        positionals: [Positional("NAME", help: "the cohort's name")], example: "flagctl cohort show beta")

    private let name: String

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
    }

    /// `field: value` lines.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (read, answer) = try client.send(API.getCohort, PathParameters(set: set, name: name), NoRequest())
        return try context.show(answer) { () throws(CLIError) in
            let cohort = try AdminClient.parsed(read.cohort, "cohort \"\(name)\"")
            var lines = ["name:        \(name)"]
            if let description = cohort["description"].string { lines.append("description: \(description)") }
            let ids = { (list: JSONValue) in (list.array ?? []).compactMap(\.string).joined(separator: ", ") }
            if cohort["include"].array?.isEmpty == false { lines.append("include:     \(ids(cohort["include"]))") }
            if cohort["exclude"].array?.isEmpty == false { lines.append("exclude:     \(ids(cohort["exclude"]))") }
            let conditions = CohortText.conditions(cohort)
            if conditions != "-" { lines.append("matches:     \(conditions)") }
            return lines
        }
    }
}

/// How a cohort's condition groups read.
enum CohortText {
    /// `(country in DE,AT and appVersion semver_gte 5.2.0) or (…)`, `-` for none.
    static func conditions(_ cohort: JSONValue) -> String {
        let groups = (cohort["groups"].array ?? []).map { group in
            RuleText.describe(.object(["conditions": group, "value": .bool(true)]))
                .replacingOccurrences(of: " → true", with: "")
        }
        if groups.isEmpty { return "-" }
        return groups.count == 1 ? groups[0] : groups.map { "(\($0))" }.joined(separator: " or ")
    }
}
