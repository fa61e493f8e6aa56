import FlagHTTP
import FlagLock
import Foundation
import Synchronization

/// Request counters and the latency histogram for `/metrics`, in the Prometheus text format.
package final class ServerMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds (long-polls land in the last ones).
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30, 300]

    /// A route by its index in `Route.ordered` (-1: unmatched), so that counting hashes two integers, not a label.
    private struct Key: Hashable {
        var route: Int
        var status: Int

        var label: String { Route.ordered.indices.contains(route) ? Route.ordered[route].label : "unmatched" }
    }

    /// The statuses the server answers with, counted in a flat table (no hashing per request); others in
    /// `State.otherRequests`.
    private static let tableStatuses = [200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500, 503]

    /// Where a status is counted in `State.table`'s row of a route.
    private static func tableColumn(_ status: Int) -> Int? {
        switch status {
        case 200: 0
        case 201: 1
        case 204: 2
        case 304: 3
        case 400: 4
        case 401: 5
        case 403: 6
        case 404: 7
        case 405: 8
        case 409: 9
        case 413: 10
        case 422: 11
        case 429: 12
        case 500: 13
        case 503: 14
        default: nil
        }
    }

    private struct State {
        /// One row per route (`route + 1`: row 0 is `unmatched`), one column per `tableStatuses` entry.
        var table = [Int](repeating: 0, count: (Route.ordered.count + 1) * ServerMetrics.tableStatuses.count)
        var otherRequests: [Key: Int] = [:]

        /// Every count, by key.
        var requests: [Key: Int] {
            var all = otherRequests
            let columns = ServerMetrics.tableStatuses.count
            for (slot, count) in table.enumerated() where count > 0 {
                all[Key(route: slot / columns - 1, status: ServerMetrics.tableStatuses[slot % columns])] = count
            }
            return all
        }

        mutating func add(_ key: Key) {
            if let column = ServerMetrics.tableColumn(key.status) {
                table[(key.route + 1) * ServerMetrics.tableStatuses.count + column] += 1
            } else {
                otherRequests[key, default: 0] += 1
            }
        }

        func count(_ key: Key) -> Int {
            guard let column = ServerMetrics.tableColumn(key.status) else { return otherRequests[key] ?? 0 }
            return table[(key.route + 1) * ServerMetrics.tableStatuses.count + column]
        }
        var buckets = [Int](repeating: 0, count: ServerMetrics.bounds.count)
        var count = 0
        var sum = 0.0
    }

    private let state = Locked(State())
    /// Event streams open right now.
    let openStreams = Atomic<Int>(0)
    /// Long-polls waiting right now.
    let waitingPolls = Atomic<Int>(0)

    /// Empty counters.
    package init() {}

    /// Counts one answered request; a nil route is counted as `unmatched`.
    /// `start` is in `CLOCK_MONOTONIC` nanoseconds (`HTTPRequest.monotonicNow()`).
    func record(route: Route?, status: Int, since start: Int64) {
        let seconds = Double(max(0, HTTPRequest.monotonicNow() - start)) / 1e9
        let bucket = Self.bounds.firstIndex { seconds <= $0 }
        state.withLock { state in
            state.add(Key(route: route?.index ?? -1, status: status))
            if let bucket { state.buckets[bucket] += 1 }
            state.count += 1
            state.sum += seconds
        }
    }

    /// How many requests were answered with `status` on `route`.
    package func requests(route: String, status: Int) -> Int {
        let index: Int
        if let known = Route.ordered.first(where: { $0.label == route }) {
            index = known.index
        } else if route == "unmatched" {
            index = -1
        } else {
            return 0
        }
        return state.withLock { $0.count(Key(route: index, status: status)) }
    }

    /// The request counters and histogram.
    func render(into metrics: inout MetricsText) {
        let snapshot = state.withLock { $0 }
        metrics.family("flagserver_requests_total", .counter, help: "Requests answered, by route and status.")
        let requests = snapshot.requests
        let keys = requests.keys.sorted { ($0.label, $0.status) < ($1.label, $1.status) }
        for key in keys {
            metrics.sample(
                "flagserver_requests_total", ["route": key.label, "status": "\(key.status)"], requests[key] ?? 0)
        }
        metrics.family(
            "flagserver_request_duration_seconds", .histogram,
            help: "Time from request to answer (or stream start).")
        metrics.histogram(
            "flagserver_request_duration_seconds", bounds: Self.bounds, buckets: snapshot.buckets,
            count: snapshot.count, sum: snapshot.sum)
        metrics.family("flagserver_open_streams", .gauge, help: "Server-Sent Events streams open now.")
        metrics.sample("flagserver_open_streams", openStreams.load(ordering: .relaxed))
        metrics.family("flagserver_waiting_polls", .gauge, help: "Long-polls waiting for a new version now.")
        metrics.sample("flagserver_waiting_polls", waitingPolls.load(ordering: .relaxed))
    }
}
