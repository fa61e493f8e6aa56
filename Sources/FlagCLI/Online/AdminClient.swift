import FlagAPI
import FlagCore
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A small synchronous client of FlagServer's admin API (docs/admin-api.md): the one place that adds the token
/// and `If-Match`, and turns error answers into a `CLIError` saying what to fix.
///
/// ```swift
/// let (client, set) = try context.clientAndSet(for: Self.configuration)
/// let (result, answer) = try client.send(API.kill, PathParameters(set: set, key: key), ChangeRequest(), ifMatch: 42)
/// ```
///
/// Every request is an endpoint of FlagAPI's `API` with its typed request; there is no way to send a path string.
package struct AdminClient {
    /// The server's base URL, without a trailing slash.
    package let server: String
    /// The flag set the command works on, if one was given.
    package let set: String?
    private let token: String
    private let session: URLSession

    /// One answer: the status, the JSON body (`null` when empty) and the version named by `ETag`.
    package struct Answer {
        /// The HTTP status.
        package let status: Int
        /// The decoded body.
        package let json: JSONValue
        /// The raw body.
        package let body: [UInt8]
        /// The response's header fields, by lowercased name.
        package let headers: [String: String]

        /// The value of the header field `name` (any case), if the answer has it.
        package func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// Makes a client from the global options; without a token, says where to find one. `server`, when given,
    /// replaces `--server` (`lint --against SERVER`), and `option` names where it came from in messages.
    package init(
        _ context: CommandContext, for configuration: CommandConfiguration, server override: String? = nil,
        option: String = "FLAGCTL_SERVER"
    ) throws(CLIError) {
        let server = override ?? context.globals.server ?? "http://127.0.0.1:8080"
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw .usage("the server '\(server)' is not an http:// or https:// URL (\(option))", of: configuration)
        }
        guard let token = context.globals.token, !token.isEmpty else {
            if FileManager.default.fileExists(atPath: "data/admin-token") {
                throw .failure(
                    "no admin token; the server wrote one to data/admin-token: "
                        + "export FLAGCTL_TOKEN=$(cat data/admin-token)")
            }
            throw .failure("no admin token: pass --token TOKEN or set FLAGCTL_TOKEN")
        }
        self.server = server.hasSuffix("/") ? String(server.dropLast()) : server
        self.token = token
        self.set = context.globals.set
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    /// The set to work on, or a usage error asking for `--set`.
    package func requireSet(for configuration: CommandConfiguration) throws(CLIError) -> String {
        guard let set, !set.isEmpty else {
            throw .usage("no flag set: pass --set NAME or set FLAGCTL_SET", of: configuration)
        }
        return set
    }

    /// Sends `request` and reads its answer; a non-2xx answer becomes the `CLIError` for it.
    private func answer(
        to request: URLRequest, method: String, path: String, ifMatch: Int?, createOnly: String?,
        typed: [String: String]
    ) throws(CLIError) -> Answer {
        let (status, bytes, headers) = try exchange(request)
        let json: JSONValue
        if bytes.isEmpty {
            json = .null
        } else if let parsed = try? JSONReader.parse(bytes) {
            json = parsed
        } else {
            throw .failure("\(server) answered \(method) \(path) with \(status) and a body that is not JSON")
        }
        guard (200..<300).contains(status) else {
            let error = Self.errorAnswer(bytes)
            if status == 409, error?.code == .alreadyExists, let createOnly { throw .failure(createOnly) }
            if status == 400, let error, let member = error.path, let what = typed[member] {
                throw .failure("\(what): \(error.message)")
            }
            throw Self.error(status: status, error, ifMatch: ifMatch)
        }
        return Answer(status: status, json: json, body: bytes, headers: headers)
    }

    /// Sends `endpoint` with its path `parameters` and `request` (FlagAPI's contract: the path, the query or body and
    /// the answer's type are the endpoint's), and reads the answer as the endpoint's answer type. A non-2xx answer
    /// is the `CLIError` for it (409 → conflict, exit 3). With `createOnly`, the request carries `If-None-Match: *`,
    /// so that a `PUT` never replaces what exists, and that message is the error when it does exist. `typed` names,
    /// by the body member, what the user typed for it (`["valueText": "--default for cols"]`), for a 400 about that
    /// member.
    /// - Returns: the typed answer, and the exchange it came in (status, headers, body) for `--wait` and `--json`.
    package func send<Request, Reply>(
        _ endpoint: Endpoint<Request, Reply>, _ parameters: PathParameters, _ request: Request, ifMatch: Int? = nil,
        review: ReviewChoice? = nil, createOnly: String? = nil, typed: [String: String] = [:]
    ) throws(CLIError) -> (Reply, Answer) {
        let call: APICall
        do {
            call = try endpoint.call(
                parameters, request, ifMatch: ifMatch, createOnly: createOnly != nil, review: review)
        } catch {
            throw .failure("cannot make the request \(endpoint.info.label): \(error)")
        }
        let answer = try send(call, ifMatch: ifMatch, createOnly: createOnly, typed: typed)
        do {
            return (try endpoint.answer(answer.body), answer)
        } catch {
            throw .failure(
                "\(server) answered \(endpoint.info.label) with what this flagctl cannot read: \(error); "
                    + "is it a flagserver of this version?")
        }
    }

    /// Sends a request made by an endpoint.
    private func send(
        _ call: APICall, ifMatch: Int?, createOnly: String?, typed: [String: String]
    ) throws(CLIError) -> Answer {
        guard let url = URL(string: server + call.target) else {
            throw .failure("cannot make a URL of '\(server)\(call.target)'")
        }
        var request = URLRequest(url: url)
        request.httpMethod = call.method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        for (name, value) in call.headers { request.setValue(value, forHTTPHeaderField: name) }
        if !call.body.isEmpty { request.httpBody = Data(call.body) }
        return try answer(
            to: request, method: call.method, path: call.target, ifMatch: ifMatch, createOnly: createOnly, typed: typed)
    }

    /// Runs the request to completion on URLSession's queue, waiting here.
    private func exchange(_ request: URLRequest) throws(CLIError) -> (Int, [UInt8], [String: String]) {
        let box = ExchangeBox()
        // A semaphore, not a `Locked`: flagctl is synchronous, and URLSession completes on a queue of its own.
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { data, response, error in
            box.data = data
            box.status = (response as? HTTPURLResponse)?.statusCode
            for (name, value) in (response as? HTTPURLResponse)?.allHeaderFields ?? [:] {
                if let name = name as? String, let value = value as? String { box.headers[name.lowercased()] = value }
            }
            box.error = error
            done.signal()
        }
        task.resume()
        done.wait()
        if let error = box.error {
            let reason: String
            switch (error as? URLError)?.code {
            case .cannotConnectToHost?: reason = "connection refused"
            case .timedOut?: reason = "timed out"
            case .cannotFindHost?, .dnsLookupFailed?: reason = "unknown host"
            default: reason = error.localizedDescription
            }
            throw .failure("cannot reach \(server): \(reason); is flagserver running? (--server / FLAGCTL_SERVER)")
        }
        guard let status = box.status else { throw .failure("\(server) sent no HTTP answer") }
        return (status, Array(box.data ?? Data()), box.headers)
    }

    /// The error of an error answer (SPEC §4, FlagAPI's `ErrorAnswer`); `nil` for a body in another shape, such as
    /// a proxy's own error page, which then speaks by its status alone.
    static func errorAnswer(_ bytes: [UInt8]) -> APIError? {
        do {
            return try ErrorAnswer.decode(answer: bytes).error
        } catch {
            return nil
        }
    }

    /// The message for an error answer: what the server said plus what to do about it. What the error is about is
    /// read from its `code` and `subject`, never from the message, whose words may change.
    static func error(status: Int, _ error: APIError?, ifMatch: Int?) -> CLIError {
        let message = error?.message ?? "HTTP \(status)"
        switch status {
        case 401:
            return .failure("the server refused the token (401): check --token / FLAGCTL_TOKEN")
        case 403:
            return .failure("this token may not do that (403): use an admin token; \(message)")
        case 409 where error?.code == .conflict:
            let current = error?.currentVersion.map { "version \($0)" } ?? "a newer version"
            let expected = ifMatch.map { ", not \($0) (--if-match)" } ?? ""
            return .conflict(
                "the set changed meanwhile: it is at \(current) now\(expected); "
                    + "nothing was changed: review with 'flagctl history' and retry")
        case 422 where error?.code == .incompatibleClients:
            // The server's message names the construct, the share and SDK versions, and `--force`.
            return .failure(message)
        case 422:
            let listed = (error?.problems ?? []).map { "\($0.path): \($0.message)" }
            return .failure(listed.isEmpty ? message : "rejected, nothing changed: " + listed.joined(separator: "; "))
        case 404 where error?.subject == .set:
            return .failure("\(message) (see 'flagctl sets list')")
        case 404 where error?.subject == .flag:
            return .failure("\(message) (see 'flagctl list')")
        default:
            return .failure(message)
        }
    }
}

/// What the URLSession callback hands back.
///
/// `@unchecked Sendable`: written once on URLSession's queue before `signal()`, read only after `wait()` returns,
/// so the semaphore orders every access.
private final class ExchangeBox: @unchecked Sendable {
    var data: Data?
    var status: Int?
    var headers: [String: String] = [:]
    var error: (any Error)?
}

extension AdminClient {
    /// A set's document, current or at `version`: FlagCore's format, not an admin answer, so it stays bytes (and
    /// `json`) for its own reader. `asServed` asks the client route for the current one too, which carries the
    /// signature; an old version is always the client route's, which is immutable.
    /// - Returns: the exchange, and the route's label for messages.
    func document(of set: String, version: Int?, asServed: Bool = false) throws(CLIError) -> (Answer, String) {
        let endpoint = version != nil ? API.oldVersion : asServed ? API.document : API.exportSet
        let (_, answer) = try send(endpoint, PathParameters(set: set, version: version), NoRequest())
        return (answer, endpoint.info.label)
    }
}

extension CommandContext {
    /// A client of the admin API and the set to work on: what most commands start with. Throws what
    /// `AdminClient.init` and `requireSet` throw, in that order.
    func clientAndSet(for configuration: CommandConfiguration) throws(CLIError) -> (AdminClient, String) {
        let client = try AdminClient(self, for: configuration)
        return (client, try client.requireSet(for: configuration))
    }
}
