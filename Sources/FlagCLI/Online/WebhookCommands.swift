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
            .auditReason,
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
        return context.showSecret(
            answer, created.secret,
            note: "created webhook \(request.name); its signing secret is shown only this once: give it to the receiver"
        )
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
            Table(header: ["NAME", "FORMAT", "SETS", "EVENTS", "PENDING", "STATE", "URL"], rows: list.webhooks) {
                hook in
                [
                    hook.name, hook.format, hook.sets?.joined(separator: ",") ?? "*",
                    hook.events?.joined(separator: ",") ?? "*", String(hook.pending),
                    hook.disabledAt == nil ? "enabled" : "disabled", hook.url,
                ]
            }
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
        let header = ["ID", "TYPE", "STATE", "ATTEMPTS", "STATUS", "ERROR"]
        context.printTable(
            Table(header: header, rows: shown.deliveries) { delivery in
                [
                    delivery.id, delivery.type, delivery.state, String(delivery.attempts),
                    delivery.lastStatus.map(String.init) ?? "-", delivery.lastError ?? "-",
                ]
            })
        return .success
    }
}

/// The steps on one webhook: delete, test, rotate-secret.
protocol WebhookStepCommand: Command {
    associatedtype Answer: APIAnswer
    /// The step's endpoint, e.g. `API.deleteWebhook`.
    static var endpoint: Endpoint<ChangeRequest, Answer> { get }
    var name: String { get }
    var reason: String? { get }
    init(name: String, reason: String?)
    /// Prints what the step did.
    func report(_ done: Answer, _ answer: AdminClient.Answer, in context: CommandContext) -> ExitCode
}

extension WebhookStepCommand {
    /// The declaration shared by these commands.
    static func step(_ verb: String, abstract: String, example: String) -> CommandConfiguration {
        .step(
            "webhooks \(verb)", on: Positional("NAME", help: "the webhook's name"), abstract: abstract,
            example: "flagctl webhooks \(verb) \(example)")
    }

    /// Takes the name and the reason.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        self.init(name: arguments.positionals[0], reason: arguments.value("reason"))
    }

    /// Sends the step and reports it.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let client = try AdminClient(context, for: Self.configuration)
        let (done, answer) = try client.send(Self.endpoint, PathParameters(name: name), ChangeRequest(reason: reason))
        return report(done, answer, in: context)
    }
}

/// `flagctl webhooks delete NAME`: removed, with its pending deliveries.
package struct WebhooksDeleteCommand: WebhookStepCommand {
    /// `webhooks delete NAME`
    package static let configuration = step(
        "delete", abstract: "Delete a webhook and its pending deliveries.", example: "chat")
    static let endpoint = API.deleteWebhook
    let name: String
    let reason: String?

    func report(_ done: DeletedWebhook, _ answer: AdminClient.Answer, in context: CommandContext) -> ExitCode {
        context.report(answer, "deleted webhook \(name)")
    }
}

/// `flagctl webhooks test NAME`: a `webhook.test` event queued for the hook.
package struct WebhooksTestCommand: WebhookStepCommand {
    /// `webhooks test NAME`
    package static let configuration = step("test", abstract: "Send a test event to a webhook.", example: "chat")
    static let endpoint = API.testWebhook
    let name: String
    let reason: String?

    func report(_ done: WebhookTestAnswer, _ answer: AdminClient.Answer, in context: CommandContext) -> ExitCode {
        context.report(
            answer, "queued test event \(done.id) for webhook \(name); `flagctl webhooks show \(name)` shows it")
    }
}

/// `flagctl webhooks rotate-secret NAME`: a new secret, printed once; the old one signs too for a day.
package struct WebhooksRotateSecretCommand: WebhookStepCommand {
    /// `webhooks rotate-secret NAME`
    package static let configuration = step(
        "rotate-secret", abstract: "Give a webhook a new signing secret; prints it once.",
        example: "chat --reason yearly")
    static let endpoint = API.rotateWebhookSecret
    let name: String
    let reason: String?

    func report(_ done: WebhookSecretAnswer, _ answer: AdminClient.Answer, in context: CommandContext) -> ExitCode {
        context.showSecret(
            answer, done.secret,
            note: "new secret for webhook \(name), shown only this once; the old one also signs for 24 hours")
    }
}
