import FlagLock
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An HTTP request of the refresh loop or the telemetry reporter.
struct TransportRequest: Sendable, Equatable {
    var url: URL
    /// Header fields; the SDK key is among them and must never be logged.
    var headers: [String: String]
    /// Seconds without data after which the request fails.
    var timeout: Double
    /// `GET`, or `POST` for a telemetry report.
    var method = "GET"
    /// The request's body; `nil` for none.
    var body: [UInt8]?
}

/// A response's status and header fields (names lower-cased).
struct TransportHead: Sendable, Equatable {
    var status: Int
    var headers: [String: String]

    /// A header field by name, any case.
    subscript(_ name: String) -> String? { headers[name.lowercased()] }

    /// The seconds `Retry-After` asks the client to wait (delta-seconds or an HTTP date, RFC 9110 §10.2.3); a date
    /// is measured against the response's own `Date`, so a skewed local clock does not matter. `nil` when the field
    /// is absent or unreadable.
    func retryAfter(localNow: Date) -> Double? {
        guard let text = self["retry-after"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(text)  // digits only; a number too long for Int is still a (huge) Double
        }
        guard let date = parseHTTPDate(text) else { return nil }
        let reference = self["date"].flatMap(parseHTTPDate) ?? localNow
        return max(0, date.timeIntervalSince(reference))
    }
}

/// A part of a streamed response.
enum StreamPart: Sendable, Equatable {
    case head(TransportHead)
    case bytes([UInt8])
}

/// How the refresh loop and the telemetry reporter talk HTTP; URLSession in the app, a scripted double in tests.
protocol FlagTransport: Sendable {
    /// Sends a request and returns the whole response.
    func fetch(_ request: TransportRequest) async throws -> (head: TransportHead, body: [UInt8])
    /// Sends a request and yields the head, then the body as it arrives; ends when the response ends, throws
    /// when the connection fails. Cancelling the consuming task closes the connection.
    func stream(_ request: TransportRequest) -> AsyncThrowingStream<StreamPart, any Error>
}

/// The transport over URLSession (FoundationNetworking on Linux). Streams use a data delegate, so bytes are
/// handed to the SSE parser as they arrive.
struct URLSessionTransport: FlagTransport {
    func fetch(_ request: TransportRequest) async throws -> (head: TransportHead, body: [UInt8]) {
        let session = URLSession(configuration: Self.configuration(timeout: request.timeout))
        defer { session.finishTasksAndInvalidate() }
        let urlRequest = Self.urlRequest(request)
        let box = Locked<URLSessionDataTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response = response as? HTTPURLResponse {
                        continuation.resume(returning: (Self.head(response), Array(data ?? Data())))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                box.withLock { $0 = task }
                task.resume()
            }
        } onCancel: {
            box.withLock { $0?.cancel() }
        }
    }

    func stream(_ request: TransportRequest) -> AsyncThrowingStream<StreamPart, any Error> {
        AsyncThrowingStream { continuation in
            let delegate = StreamDelegate(continuation: continuation)
            let session = URLSession(
                configuration: Self.configuration(timeout: request.timeout), delegate: delegate, delegateQueue: nil)
            let task = session.dataTask(with: Self.urlRequest(request))
            continuation.onTermination = { _ in
                task.cancel()
                session.invalidateAndCancel()
            }
            task.resume()
        }
    }

    private static func configuration(timeout: Double) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return configuration
    }

    private static func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.timeoutInterval = request.timeout
        urlRequest.httpMethod = request.method
        if let body = request.body { urlRequest.httpBody = Data(body) }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    static func head(_ response: HTTPURLResponse) -> TransportHead {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return TransportHead(status: response.statusCode, headers: headers)
    }
}

/// Feeds a stream's head and bytes to a continuation as URLSession delivers them.
final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let continuation: AsyncThrowingStream<StreamPart, any Error>.Continuation

    init(continuation: AsyncThrowingStream<StreamPart, any Error>.Continuation) {
        self.continuation = continuation
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let response = response as? HTTPURLResponse else {
            continuation.finish(throwing: URLError(.badServerResponse))
            completionHandler(.cancel)
            return
        }
        continuation.yield(.head(URLSessionTransport.head(response)))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(Array(data)))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        session.finishTasksAndInvalidate()
    }
}
