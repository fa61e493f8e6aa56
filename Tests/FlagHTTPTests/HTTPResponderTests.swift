import Synchronization
import Testing

@testable import FlagHTTP

@Suite("HTTP responder semantics, in process")
struct HTTPResponderTests {
    @Test func onlyTheFirstAnswerCounts() async {
        let recorder = HTTPResponseRecorder()
        recorder.responder.respond(HTTPResponse(status: 200))
        recorder.responder.respond(HTTPResponse(status: 500))
        let stream = recorder.responder.startStream(HTTPResponse(status: 200))
        #expect(await recorder.waitForResponse(timeout: .seconds(1))?.status == 200)
        #expect(!recorder.isStream)
        #expect(!stream.isOpen)
    }

    @Test func onCloseFiresOnceWhenTheClientLeavesFirst() {
        let recorder = HTTPResponseRecorder()
        let calls = Atomic<Int>(0)
        recorder.responder.onClose { calls.add(1, ordering: .relaxed) }
        recorder.disconnectClient()
        recorder.disconnectClient()
        #expect(calls.load(ordering: .relaxed) == 1)
        recorder.responder.onClose { calls.add(1, ordering: .relaxed) }  // late registration runs at once
        #expect(calls.load(ordering: .relaxed) == 2)
        recorder.responder.respond(HTTPResponse(status: 200))  // dropped
        #expect(recorder.response == nil)
    }

    @Test func onCloseNeverFiresAfterAnAnswer() {
        let recorder = HTTPResponseRecorder()
        let calls = Atomic<Int>(0)
        recorder.responder.onClose { calls.add(1, ordering: .relaxed) }
        recorder.responder.respond(HTTPResponse(status: 304))
        recorder.disconnectClient()
        #expect(calls.load(ordering: .relaxed) == 0)
    }

    @Test func streamsRecordWritesAndEndEitherWay() {
        let finished = HTTPResponseRecorder()
        let calls = Atomic<Int>(0)
        finished.responder.onClose { calls.add(1, ordering: .relaxed) }
        let stream = finished.responder.startStream(HTTPResponse(status: 200, body: Array("a".utf8)))
        stream.write(Array("b".utf8))
        stream.finish()
        stream.write(Array("c".utf8))
        #expect(finished.streamBody == Array("ab".utf8))
        #expect(finished.isStreamFinished)
        finished.disconnectClient()
        #expect(calls.load(ordering: .relaxed) == 0)

        let abandoned = HTTPResponseRecorder()
        abandoned.responder.onClose { calls.add(1, ordering: .relaxed) }
        let open = abandoned.responder.startStream(HTTPResponse(status: 200))
        #expect(open.isOpen)
        abandoned.disconnectClient()
        #expect(!open.isOpen)
        #expect(calls.load(ordering: .relaxed) == 1)
    }
}
