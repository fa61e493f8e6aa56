import FlagAPI
import FlagCore

/// `lint FILE --against SERVER`: the file's flags checked against what the set's active clients can evaluate.
extension LintCommand {
    /// What the check found, ready to print.
    struct ClientFindings {
        let server: String
        let set: String
        let silent: Int
        let outcome: CompatibilityCheck.Outcome

        /// Whether the server's gate would refuse the file as a write: a finding, exit 1.
        var refused: Bool { outcome.refused }

        /// One line per construct some active instances lack (those the gate lets pass prefixed `note:`).
        var lines: [String] { outcome.findings.map { $0.line(set: set, refused: outcome.refused) } }

        /// `prod on http://…: 850 active instances; the compatibility gate would refuse …`.
        var summary: String {
            let active = outcome.active
            var text = "\(set) on \(server): "
            if active == 0 {
                text += "no active instance reports what it can evaluate: nothing to check against"
            } else if outcome.refused {
                text +=
                    "the compatibility gate would refuse this file: \(outcome.lackingIntroduced) of "
                    + "\(counted(active, "active instance")) "
                    + "(\(CompatibilityCheck.Finding.share(outcome.lackingIntroduced, of: active))) cannot evaluate "
                    + "what it introduces, over the 0.1% allowed (--force writes it anyway)"
            } else {
                text += "\(counted(active, "active instance")), nothing the compatibility gate would refuse"
            }
            if silent > 0 { text += "; " + PropagationText.silent(silent) }
            return text
        }

        /// `{"server","set","active","silent","lackingIntroduced","refused","findings":[…]}`.
        var json: JSONValue {
            .object([
                "server": .string(server), "set": .string(set), "active": .int(Int64(outcome.active)),
                "silent": .int(Int64(silent)), "lackingIntroduced": .int(Int64(outcome.lackingIntroduced)),
                "refused": .bool(outcome.refused), "findings": .array(outcome.findings.map(\.json)),
            ])
        }
    }

    /// Fetches the set's clients and its current document from `--against`, and checks the file against them. The
    /// set is the one the file names, else `--set`.
    func againstClients(_ file: FlagSetFile, server: String, _ context: CommandContext) throws(CLIError)
        -> ClientFindings
    {
        let client = try AdminClient(context, for: Self.configuration, server: server, option: "--against")
        let fileSet = file.compiled.flagSet
        let set = fileSet.name.isEmpty ? context.globals.set : fileSet.name
        guard let set, !set.isEmpty else {
            throw .usage(
                "\(path) names no set (\"set\"), so --against does not know whose clients to ask: pass --set NAME",
                of: Self.configuration)
        }
        // The window the server's gate counts as active.
        let (wire, _) = try client.send(API.clients, PathParameters(set: set), ClientsQuery(within: 300))
        let clients = try ClientsReport(wire, route: API.clients.info.label)
        let (document, _) = try client.document(of: set, version: nil)
        let current: FlagSet
        do {
            current = try FlagSet.decode(document.body)
        } catch {
            throw .failure(
                "the server's document of \(set) cannot be read: \(error); is it a flagserver of this version?")
        }
        let check = CompatibilityCheck(file: fileSet, current: current, instances: clients.instances)
        return ClientFindings(server: client.server, set: set, silent: clients.silent, outcome: check.run())
    }
}
