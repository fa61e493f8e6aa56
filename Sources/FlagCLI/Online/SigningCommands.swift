import FlagAPI
import FlagCore
import FlagSigning
import Foundation

/// `flagctl signing-key show`: the set's public signing keys, what an app ships to trust (docs/signing.md).
package struct SigningKeyShowCommand: Command {
    /// `signing-key show`
    package static let configuration = CommandConfiguration(
        name: "signing-key show", abstract: "List the set's signing keys: id, public key, state.", synopsis: "",
        example: "flagctl --set ios-prod signing-key show")

    /// Takes nothing.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {}

    /// GETs `/v1/sets/{set}/signing-keys`; `--json` prints the answer as it is.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (keys, answer) = try client.send(API.signingKeys, PathParameters(set: set), NoRequest())
        return context.show(answer) { SigningKeyTable.lines(keys.keys, set: set) }
    }
}

/// `flagctl signing-key rotate`: adds a key, published for apps to ship before it signs anything.
package struct SigningKeyRotateCommand: Command {
    /// `signing-key rotate`
    package static let configuration = CommandConfiguration(
        name: "signing-key rotate",
        abstract: "Add a signing key, published until activated.",
        synopsis: "[--reason S]", options: [.auditReason],
        example: "flagctl --set ios-prod signing-key rotate --reason 'yearly rotation'")

    private let reason: String?

    /// Takes the reason.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        reason = arguments.value("reason")
    }

    /// POSTs to the set's signing keys and prints the new key.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (made, answer) = try client.send(
            API.rotateSigningKey, PathParameters(set: set), ChangeRequest(reason: reason))
        if context.globals.json {
            context.console.print(answer.json.compactText)
            return .success
        }
        let id = made.id
        let key = made.publicKey
        if made.state == "active" {
            context.console.print("set \(set): signing key \(id) made and active; every version is signed with it now")
        } else {
            context.console.print("set \(set): signing key \(id) published, not signing yet")
            context.console.print(
                "ship apps trusting it, then: flagctl --set \(set) signing-key activate \(id)")
        }
        context.console.print("public key: \(key)")
        return .success
    }
}

/// The steps of a rotation on one key, each followed by the list of keys: activate, retire.
protocol SigningKeyStepCommand: Command {
    /// The step's endpoint, e.g. `API.activateSigningKey`.
    static var endpoint: Endpoint<ChangeRequest, SigningKeyList> { get }
    /// What the key does after the step, e.g. `signs now`.
    static var done: String { get }
    var id: String { get }
    var reason: String? { get }
    init(id: String, reason: String?)
}

extension SigningKeyStepCommand {
    /// The declaration shared by these commands; `id` is the example's.
    static func step(_ verb: String, abstract: String, example id: String) -> CommandConfiguration {
        .step(
            "signing-key \(verb)", on: Positional("ID", help: "the key's id (signing-key show)"), abstract: abstract,
            example: "flagctl --set ios-prod signing-key \(verb) \(id)")
    }

    /// Takes the id and the reason.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        self.init(id: arguments.positionals[0], reason: arguments.value("reason"))
    }

    /// POSTs `…/signing-keys/{id}/{step}` and lists the keys.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let (client, set) = try context.clientAndSet(for: Self.configuration)
        let (keys, answer) = try client.send(
            Self.endpoint, PathParameters(set: set, name: id), ChangeRequest(reason: reason))
        return context.show(answer) {
            ["set \(set): key \(id) \(Self.done)"] + SigningKeyTable.lines(keys.keys, set: set)
        }
    }
}

/// `flagctl signing-key activate ID`: the second step of a rotation.
package struct SigningKeyActivateCommand: SigningKeyStepCommand {
    /// `signing-key activate ID`
    package static let configuration = step(
        "activate", abstract: "Sign new versions (and the current one) with a published key.",
        example: "9f1c2a7d0e4b5c68")
    static let endpoint = API.activateSigningKey
    static let done = "signs now"
    let id: String
    let reason: String?
}

/// `flagctl signing-key retire ID`: the third step of a rotation.
package struct SigningKeyRetireCommand: SigningKeyStepCommand {
    /// `signing-key retire ID`
    package static let configuration = step(
        "retire", abstract: "Retire a signing key that no longer signs.", example: "21fe31dfa154a261")
    static let endpoint = API.retireSigningKey
    static let done = "retired"
    let id: String
    let reason: String?
}

/// The keys of `GET /v1/sets/{set}/signing-keys`, for people.
enum SigningKeyTable {
    /// `ID  STATE  CREATED  PUBLIC KEY`, or a line saying that the set is not signed.
    static func lines(_ keys: [SigningKeyInfo], set: String) -> [String] {
        guard !keys.isEmpty else {
            return ["set \(set) has no signing key: it is not signed (flagctl signing-key rotate signs it)"]
        }
        let table = Table(header: ["ID", "STATE", "CREATED", "PUBLIC KEY"], rows: keys) { key in
            [key.id, key.state, ISO8601.format(key.createdAt), key.publicKey]
        }
        return table.lines(fitting: 160)
    }
}

/// `flagctl verify FILE --key BASE64`: checks an exported signed document offline, with `FILE.sig` beside it.
package struct VerifyCommand: Command {
    /// `verify FILE --key BASE64`
    package static let configuration = CommandConfiguration(
        name: "verify", abstract: "Check an export --signed file against a trusted key, offline.",
        synopsis: "FILE --key BASE64 [--key BASE64]",
        positionals: [Positional("FILE", help: "the document; its signature is read from FILE.sig")],
        options: [
            .value("key", "BASE64", help: "a trusted public key (signing-key show); repeat to trust several")
        ],
        example: "flagctl verify Flags/bootstrap.json --key 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")

    private let file: String
    private let keys: [SigningKey]

    /// Takes the file and the keys; a malformed key is a usage error naming what is wrong with it.
    package init(parsing arguments: ParsedArguments) throws(CLIError) {
        file = arguments.positionals[0]
        let texts = arguments.values("key")
        guard !texts.isEmpty else { throw arguments.usageError("--key BASE64 is required: the public key to trust") }
        var keys: [SigningKey] = []
        for (index, text) in texts.enumerated() {
            do {
                keys.append(try SigningKey(base64: text))
            } catch {
                throw arguments.usageError("--key number \(index + 1): \(error)")
            }
        }
        self.keys = keys
    }

    /// Verifies; exit 0 with what was verified, or 1 with why not.
    package func run(in context: CommandContext) throws(CLIError) -> ExitCode {
        let body = try FileInput.contents(of: file)
        let signatureFile = file + ".sig"
        var signatureText = String(decoding: try FileInput.contents(of: signatureFile), as: UTF8.self)
        // An editor or `echo` leaves one line break at the end; the value itself has none.
        if signatureText.hasSuffix("\n") { signatureText.removeLast() }
        let signature: Signature
        do {
            signature = try Signature(headerValue: signatureText)
        } catch {
            throw .failure("\(signatureFile): \(error)")
        }
        let document: JSONValue
        do {
            document = try JSONReader.parse(body)
        } catch {
            throw .failure("\(file) is not JSON (\(error)); was it written by export --signed?")
        }
        guard let set = document["set"].string, let version = document["version"].int, version >= 1 else {
            throw .failure(
                "\(file) is not a flag-set document with \"set\" and \"version\"; was it written by export --signed?")
        }
        let message = SignedMessage(set: set, version: version, baseVersion: nil, body: body)
        let trusted = keys.first { $0.id == signature.keyID }
        guard let trusted else {
            throw .failure(
                "\(file) is signed by key \(signature.keyID), which is not among the keys given ("
                    + keys.map(\.id).joined(separator: ", ") + ")")
        }
        do {
            try trusted.verify(signature, for: message)
        } catch {
            throw .failure("\(file): the signature does not match its bytes: \(error)")
        }
        if context.globals.json {
            var writer = JSONWriter()
            writer.value(.object(["set": .string(set), "version": .int(Int64(version)), "key": .string(trusted.id)]))
            context.console.print(String(decoding: writer.bytes, as: UTF8.self))
        } else {
            context.console.print("verified: set \(set), version \(version), signed by key \(trusted.id)")
        }
        return .success
    }
}
