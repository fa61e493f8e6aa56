import FlagAPI
import FlagCore

/// `flagctl webhooks create NAME URL`: a new webhook; its signing secret is printed this once.
package struct WebhooksCreateCommand: Command {
    /// `webhooks create NAME URL`
    package static let configuration = CommandConfiguration(
        name: "webhooks create", abstract: "Create a webhook; prints its signing secret once.",
        synopsis: "NAME URL [--sets a,b] [--events a,b] [--format json|slack] [--description S] [--reason S]",
        positionals: [
            Positional("NAME", help: "a name unique on the server"),
            Positional("URL", help: "where events are posted (http or https)"),
        ],
        options: [
            .value("sets", "A,B", help: "only events of these sets (default: every set)"),
            .value("events", "A,B", help: "only these events, e.g. version.created (default: every event)"),
            .value("format", "FORMAT", help: "json (Standard Webhooks, the default) or slack"),
            .value("description", "S", help: "what it is for"),
            .value("reason", "S", help: "why, recorded in the audit log"),
        ],
        example: "flagctl webhooks create chat https://hooks.slack.com/services/T/B/X --format slack --sets prod")

    private let request: CreateWebhookRequest

    /// Takes the name, the URL and the filters.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        func list(_ name: String) -> [String]? {
            arguments.value(name).map { $0.split(separator: ",").map(String.init) }
        }
        request = CreateWebhookRequest(
            name: arguments.positionals[0], url: arguments.positionals[1], sets: list("sets"), events: list("events"),
            format: arguments.value("format"), description: arguments.value("description"),
            reason: arguments.value("reason"))
    }

    /// POSTs and prints the secret.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (created, answer) = try client.send(API.createWebhook, PathParameters(), request)
        guard !context.globals.json else {
            context.console.print(answer.json.compactText)
            return .success
        }
        context.console.print(created.secret)
        context.console.printError(
            "created webhook \(request.name); its signing secret is shown only this once: give it to the receiver")
        return .success
    }
}

/// `flagctl webhooks list`.
package struct WebhooksListCommand: Command {
    /// `webhooks list`
    package static let configuration = CommandConfiguration(
        name: "webhooks list", abstract: "List the webhooks you may manage.", synopsis: "",
        example: "flagctl webhooks list")

    /// Takes no arguments.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// `NAME  FORMAT  SETS  EVENTS  PENDING  STATE  URL`
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (list, answer) = try client.send(API.listWebhooks, PathParameters(), NoRequest())
        return context.showTable(answer) {
            var table = Table(header: ["NAME", "FORMAT", "SETS", "EVENTS", "PENDING", "STATE", "URL"])
            for hook in list.webhooks {
                table.append([
                    hook.name, hook.format, hook.sets?.joined(separator: ",") ?? "*",
                    hook.events?.joined(separator: ",") ?? "*", String(hook.pending),
                    hook.disabledAt == nil ? "enabled" : "disabled", hook.url,
                ])
            }
            return table
        }
    }
}

/// `flagctl webhooks show NAME`: the hook and its recent deliveries.
package struct WebhooksShowCommand: Command {
    /// `webhooks show NAME`
    package static let configuration = CommandConfiguration(
        name: "webhooks show", abstract: "Show a webhook and its recent deliveries.", synopsis: "NAME",
        positionals: [Positional("NAME", help: "the webhook's name")], example: "flagctl webhooks show chat")

    private let name: String

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
    }

    /// The hook's lines, then `ID  TYPE  STATE  ATTEMPTS  STATUS  ERROR`, newest first (`--json` has the rest).
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (shown, answer) = try client.send(API.getWebhook, PathParameters(name: name), NoRequest())
        guard !context.globals.json else {
            context.console.print(answer.json.compactText)
            return .success
        }
        let hook = shown.webhook
        context.console.print("\(hook.name)  \(hook.format)  \(hook.url)")
        context.console.print("sets: \(hook.sets?.joined(separator: ", ") ?? "every set")")
        context.console.print("events: \(hook.events?.joined(separator: ", ") ?? "every event")")
        if let disabled = hook.disabledAt {
            context.console.print("disabled \(Shown.date(disabled)): \(hook.disabledReason ?? "")")
        }
        if let until = hook.previousSecretUntil {
            context.console.print("the secret before the last rotation signs too until \(Shown.date(until))")
        }
        var table = Table(header: ["ID", "TYPE", "STATE", "ATTEMPTS", "STATUS", "ERROR"])
        for delivery in shown.deliveries {
            table.append([
                delivery.id, delivery.type, delivery.state, String(delivery.attempts),
                delivery.lastStatus.map(String.init) ?? "-", delivery.lastError ?? "-",
            ])
        }
        context.printTable(table)
        return .success
    }
}

/// `flagctl webhooks delete NAME`: removed, with its pending deliveries.
package struct WebhooksDeleteCommand: Command {
    /// `webhooks delete NAME`
    package static let configuration = CommandConfiguration(
        name: "webhooks delete", abstract: "Delete a webhook and its pending deliveries.",
        synopsis: "NAME [--reason S]",
        positionals: [Positional("NAME", help: "the webhook's name")],
        options: [.value("reason", "S", help: "why, recorded in the audit log")],
        example: "flagctl webhooks delete chat")

    private let name: String
    private let reason: String?

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        reason = arguments.value("reason")
    }

    /// DELETEs the hook.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (_, answer) = try client.send(
            API.deleteWebhook, PathParameters(name: name), ChangeRequest(reason: reason))
        context.report(answer, "deleted webhook \(name)")
        return .success
    }
}

/// `flagctl webhooks test NAME`: a `webhook.test` event queued for the hook.
package struct WebhooksTestCommand: Command {
    /// `webhooks test NAME`
    package static let configuration = CommandConfiguration(
        name: "webhooks test", abstract: "Send a test event to a webhook.", synopsis: "NAME [--reason S]",
        positionals: [Positional("NAME", help: "the webhook's name")],
        options: [.value("reason", "S", help: "why, recorded in the audit log")],
        example: "flagctl webhooks test chat")

    private let name: String
    private let reason: String?

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        reason = arguments.value("reason")
    }

    /// POSTs the test and prints the event's id.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (queued, answer) = try client.send(
            API.testWebhook, PathParameters(name: name), ChangeRequest(reason: reason))
        context.report(
            answer, "queued test event \(queued.id) for webhook \(name); `flagctl webhooks show \(name)` shows it")
        return .success
    }
}

/// `flagctl webhooks rotate-secret NAME`: a new secret, printed once; the old one signs too for a day.
package struct WebhooksRotateSecretCommand: Command {
    /// `webhooks rotate-secret NAME`
    package static let configuration = CommandConfiguration(
        name: "webhooks rotate-secret", abstract: "Give a webhook a new signing secret; prints it once.",
        synopsis: "NAME [--reason S]", positionals: [Positional("NAME", help: "the webhook's name")],
        options: [.value("reason", "S", help: "why, recorded in the audit log")],
        example: "flagctl webhooks rotate-secret chat --reason yearly")

    private let name: String
    private let reason: String?

    /// Takes the name.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        name = arguments.positionals[0]
        reason = arguments.value("reason")
    }

    /// POSTs and prints the new secret.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (rotated, answer) = try client.send(
            API.rotateWebhookSecret, PathParameters(name: name), ChangeRequest(reason: reason))
        guard !context.globals.json else {
            context.console.print(answer.json.compactText)
            return .success
        }
        context.console.print(rotated.secret)
        context.console.printError(
            "new secret for webhook \(name), shown only this once; the old one also signs for 24 hours")
        return .success
    }
}
