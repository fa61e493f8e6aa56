import Testing

@testable import FlagHTTP

/// A loop takes answers to requests before stream events, so a writer's answer does not wait behind the fan-out of
/// its own write; each lane keeps its order.
@Suite("EventLoop inbox")
struct EventLoopInboxTests {
    private static func connection(_ slot: UInt32) -> ConnectionID { ConnectionID(slot: slot, generation: 1) }

    @Test func answersHaveALaneOfTheirOwnAndEachLaneKeepsItsOrder() {
        var inbox = EventLoop.Inbox()
        #expect(inbox.isEmpty)
        inbox.append(.startStream(Self.connection(1), sequence: 0, HTTPResponse(status: 200)))
        for slot in 2...1_000 { inbox.append(.streamWrite(Self.connection(UInt32(slot)), sequence: 0, [1])) }
        inbox.append(.respond(Self.connection(7), sequence: 3, HTTPResponse(status: 200)))
        inbox.append(.streamFinish(Self.connection(1), sequence: 0))
        inbox.append(.respond(Self.connection(8), sequence: 0, HTTPResponse(status: 204)))
        #expect(!inbox.isEmpty)

        let answered = inbox.responses.compactMap { message -> (UInt32, Int)? in
            if case .respond(let id, _, let response) = message { return (id.slot, response.status) }
            return nil
        }
        #expect(answered.map(\.0) == [7, 8] && answered.map(\.1) == [200, 204])
        #expect(inbox.messages.count == 1_001)
        let slots = inbox.messages.map { message -> UInt32? in
            switch message {
            case .startStream(let id, _, _), .streamWrite(let id, _, _), .streamFinish(let id, _): id.slot
            case .respond, .shutdown: nil
            }
        }
        #expect(slots == [1] + (2...1_000).map { UInt32($0) } + [1])
    }
}
