import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

@Suite("Client API: documents, ETags, long-polls, event streams", .live)
struct ClientRouteTests {
    @Test func theDocumentCarriesItsVersionAsETag() async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", "/v1/sets/ios-prod", token: harness.sdk)
            #expect(response.status == 200)
            #expect(response.header("ETag") == "\"1\"")
            #expect(response.header("Content-Type") == "application/json; charset=utf-8")
            #expect(response.body == (try? harness.app.service.servedDocument("ios-prod"))?.bytes)
            #expect(try response.json("version") == .int(1))
        }
    }

    @Test(arguments: ["\"1\"", "W/\"1\"", "\"0\", \"1\"", "*"])
    func aCurrentIfNoneMatchIsNotModified(tag: String) async throws {
        try await withHarness { harness in
            let response = try harness.send(
                "GET", "/v1/sets/ios-prod", token: harness.sdk, headers: [("If-None-Match", tag)])
            #expect(response.status == 304)
            #expect(response.header("ETag") == "\"1\"")
            #expect(response.body.isEmpty)
        }
    }

    @Test func anOldIfNoneMatchGetsTheDocument() async throws {
        try await withHarness { harness in
            let response = try harness.send(
                "GET", "/v1/sets/ios-prod?wait=30", token: harness.sdk, headers: [("If-None-Match", "\"0\"")])
            #expect(response.status == 200)
        }
    }

    @Test func aLongPollWakesUpOnTheNextVersion() async throws {
        try await withHarness { harness in
            // The longest wait: under ThreadSanitizer, with the cooperative pool busy, the 20 ms sleep below once
            // lasted past a 30 s wait, and the poll was answered by its timeout (304) before the write.
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod?wait=300", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            try await Task.sleep(for: .milliseconds(20))
            #expect(recorder.response == nil)
            #expect(harness.app.metrics.waitingPolls.load(ordering: .relaxed) == 1)
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill", body: #"{"reason":"x"}"#)
            // Answered right after the write, off its path: the new document is assembled for the poll, not by it.
            #expect(await eventually { recorder.response != nil })
            let response = TestResponse(try #require(recorder.response))
            #expect(response.status == 200)
            #expect(response.header("ETag") == "\"2\"")
            #expect(try response.json("flags.new-checkout.killed") == .bool(true))
            #expect(harness.app.metrics.waitingPolls.load(ordering: .relaxed) == 0)
            #expect(harness.app.deadlines.count == 0)
        }
    }

    @Test func aClientLeavingALongPollLeavesNothingBehind() async throws {
        try await withHarness { harness in
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod?wait=300", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            #expect(harness.app.deadlines.count == 1)
            #expect(harness.app.service.registry.subscriberCounts()["ios-prod"] == 1)
            recorder.disconnectClient()
            #expect(harness.app.deadlines.count == 0)
            #expect(harness.app.metrics.waitingPolls.load(ordering: .relaxed) == 0)
            #expect(await eventually { harness.app.service.registry.subscriberCounts()["ios-prod"] == 0 })
            #expect(recorder.response == nil)
        }
    }

    @Test func aLongPollTimesOutWithNotModified() async throws {
        try await withHarness { harness in
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod?wait=1", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            #expect(recorder.response == nil)
            let response = try #require(await recorder.waitForResponse(timeout: .patience))
            #expect(response.status == 304)
            #expect(response.headers["ETag"] == "\"1\"")
        }
    }

    @Test func aLongPollIsAnsweredAtShutdown() async throws {
        try await withHarness { harness in
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod?wait=300", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            harness.app.shutdown()
            #expect(recorder.response?.status == 304)
        }
    }

    @Test func aBadWaitIsABadRequest() async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", "/v1/sets/ios-prod?wait=soon", headers: [("If-None-Match", "\"1\"")])
            #expect(response.status == 400)
            #expect(try response.json("error.path") == .string("wait"))
        }
    }

    @Test func oldVersionsAreImmutable() async throws {
        try await withHarness { harness in
            let version1 = try harness.app.service.servedDocument("ios-prod").bytes
            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill")
            let response = try harness.send("GET", "/v1/sets/ios-prod/versions/1", token: harness.sdk)
            #expect(response.status == 200)
            #expect(response.header("Cache-Control") == "private, max-age=31536000, immutable")
            #expect(response.header("ETag") == "\"1\"")
            #expect(response.body == version1)
            #expect(try harness.send("GET", "/v1/sets/ios-prod/versions/2", token: harness.sdk).status == 200)
            #expect(try harness.send("GET", "/v1/sets/ios-prod/versions/3", token: harness.sdk).status == 404)
            #expect(try harness.send("GET", "/v1/sets/ios-prod/versions/zero", token: harness.sdk).status == 400)
        }
    }

    @Test func unknownSetsAndRoutesAreNotFound() async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", "/v1/sets/web-prod")
            #expect(response.status == 404)
            #expect(try response.json("error.code") == .string("not_found"))
            #expect(try harness.send("GET", "/v1/nothing").status == 404)
            #expect(try harness.send("POST", "/v1/sets/ios-prod").status == 405)
        }
    }

    @Test func aStreamStartsWithThePutThenSendsPatches() async throws {
        // The unsigned wire format; SigningRouteTests has the signed one.
        try await withHarness(signed: false) { harness in
            let recorder = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            let head = try #require(recorder.response)
            #expect(recorder.isStream)
            #expect(head.status == 200)
            #expect(head.headers["Content-Type"] == "text/event-stream; charset=utf-8")
            #expect(head.headers["Cache-Control"] == "no-cache")
            #expect(head.headers["X-Accel-Buffering"] == "no")
            let document = try harness.app.service.servedDocument("ios-prod").bytes
            harness.settle()  // the put goes out on the fan-out queue once the document is made
            let put = "event: put\nid: 1\ndata: " + String(decoding: document, as: UTF8.self) + "\n\n"
            #expect(String(decoding: recorder.streamBody, as: UTF8.self) == put)

            _ = try harness.send("POST", "/v1/admin/sets/ios-prod/flags/new-checkout/kill")
            let flag = try #require(harness.app.service.state("ios-prod")?.items[.flag("new-checkout")])
            let patch =
                "event: patch\nid: 2\ndata: {\"version\":2,\"base\":1,\"flags\":{\"new-checkout\":"
                + String(decoding: flag, as: UTF8.self)
                + "},\"cohorts\":{},\"removed\":{\"flags\":[],\"cohorts\":[]}}\n\n"
            #expect(String(decoding: recorder.streamBody, as: UTF8.self) == put + patch)
            #expect(harness.app.metrics.openStreams.load(ordering: .relaxed) == 1)

            harness.app.service.registry.heartbeat()
            harness.settle()
            #expect(String(decoding: recorder.streamBody, as: UTF8.self).hasSuffix(": heartbeat\n\n"))
            recorder.disconnectClient()
            #expect(harness.app.metrics.openStreams.load(ordering: .relaxed) == 0)
            #expect(await eventually { harness.app.service.registry.subscriberCounts()["ios-prod"] == 0 })
        }
    }

    /// A current client gets a comment at once, so that it knows nothing newer is coming.
    @Test func aCurrentLastEventIDGetsACommentInsteadOfThePut() async throws {
        try await withHarness { harness in
            let current = harness.start(
                "GET", "/v1/sets/ios-prod/stream", token: harness.sdk, headers: [("Last-Event-ID", "1")])
            #expect(current.isStream)
            #expect(String(decoding: current.streamBody, as: UTF8.self) == ": current\n\n")
            let stale = harness.start(
                "GET", "/v1/sets/ios-prod/stream", token: harness.sdk, headers: [("Last-Event-ID", "0")])
            // The put follows once the documents executor made the document.
            #expect(
                await eventually { String(decoding: stale.streamBody, as: UTF8.self).hasPrefix("event: put\nid: 1\n") })
        }
    }

    @Test func shutdownFinishesStreams() async throws {
        try await withHarness { harness in
            let recorder = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            harness.app.shutdown()
            #expect(recorder.isStreamFinished)
            #expect(harness.app.metrics.openStreams.load(ordering: .relaxed) == 0)
            let late = harness.start("GET", "/v1/sets/ios-prod/stream", token: harness.sdk)
            #expect(late.isStreamFinished)
        }
    }

    @Test func ofrepEvaluatesOnTheServer() async throws {
        try await withHarness { harness in
            let body = #"{"context":{"targetingKey":"u-1"}}"#
            let one = try harness.send("POST", "/ofrep/v1/evaluate/flags/new-checkout", token: harness.sdk, body: body)
            #expect(one.status == 200)
            #expect(try one.json("value") == .bool(true))
            #expect(try one.json("reason") == .string("TARGETING_MATCH"))
            #expect(try one.json("variant") == .string("beta-first"))
            let missing = try harness.send("POST", "/ofrep/v1/evaluate/flags/nope", token: harness.sdk, body: body)
            #expect(missing.status == 404)
            #expect(try missing.json("errorCode") == .string("FLAG_NOT_FOUND"))
            let all = try harness.send("POST", "/ofrep/v1/evaluate/flags", token: harness.sdk, body: body)
            guard case .array(let flags)? = try all.json("flags") else {
                Issue.record("no flags array")
                return
            }
            #expect(flags.count == 2)
            let noKey = try harness.send(
                "POST", "/ofrep/v1/evaluate/flags/new-checkout", token: harness.sdk, body: #"{"context":{}}"#)
            #expect(noKey.status == 400)
            #expect(try noKey.json("errorCode") == .string("TARGETING_KEY_MISSING"))
        }
    }

    @Test func heartbeatsFollowTheConfiguredInterval() async throws {
        try await withHarness(settings: .init(heartbeatInterval: .milliseconds(20))) { harness in
            harness.app.start(server: nil)
            defer { harness.app.shutdown() }
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod/stream", token: harness.sdk, headers: [("Last-Event-ID", "1")])
            let first = SetStreamEvent.current.count
            #expect(await eventually { recorder.streamBody.count >= first + 2 * SetStreamEvent.heartbeat.count })
            #expect(recorder.streamBody.prefix(first) == SetStreamEvent.current[...])
            #expect(
                recorder.streamBody.dropFirst(first).prefix(SetStreamEvent.heartbeat.count)
                    == SetStreamEvent.heartbeat[...])
        }
    }

    @Test func longPollsAreCutToTheConfiguredMaximum() async throws {
        try await withHarness(settings: .init(longPollMaxSeconds: 1)) { harness in
            let recorder = harness.start(
                "GET", "/v1/sets/ios-prod?wait=3600", token: harness.sdk, headers: [("If-None-Match", "\"1\"")])
            // Generous for a loaded machine; without the cap the answer would take an hour.
            let response = try #require(await recorder.waitForResponse(timeout: .patience))
            #expect(response.status == 304)
            #expect(harness.app.deadlines.count == 0)
        }
    }
}
