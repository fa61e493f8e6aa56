import FlagAPI

extension Mutation {
    /// Sends one write of a set with this mutation's `--if-match` and review choice (`--propose`,
    /// `--without-review`), then ends the command as `finish` does; `lines` says what the result is, for people.
    ///
    /// ```swift
    /// return try mutation.write(
    ///     API.kill, PathParameters(set: set, key: key), mutation.changeRequest, set: set, client: client, context
    /// ) { result in ["killed \(key) \(AdminClient.versionNote(result))"] }
    /// ```
    func write<Request>(
        _ endpoint: Endpoint<Request, MutationResult>, _ parameters: PathParameters, _ request: Request, set: String,
        client: AdminClient, _ context: CommandContext, typed: [String: String] = [:],
        lines: (MutationResult) throws(CLIError) -> [String]
    ) throws(CLIError) -> ExitCode {
        let (result, answer) = try client.send(
            endpoint, parameters, request, ifMatch: ifMatch, review: review, typed: typed)
        return try finish(result, answer, set: set, client: client, context) { () throws(CLIError) in
            try lines(result)
        }
    }
}
