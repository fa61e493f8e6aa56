// libFuzzer harness for FlagAPI's readers: the request decoder, which reads every admin route's body and query
// from whoever holds a token, and the answer decoder, which flagctl runs on whatever a server sends back.
// Run with `Fuzz/run api` (see Fuzz/README.md).
//
// The first byte picks a request or answer type; its high bit sends the rest as a query string (`a=1&b=x`) instead
// of a body. Properties checked on every input; a violation traps so that libFuzzer saves the input as a crash:
// - no crash, no sanitizer report, whatever the bytes;
// - a refusal is a `WireFormatError` that names a member, or is about the body as a whole (not JSON, not an object);
// - what is accepted writes out canonically: reading its encoding back and writing it again gives the same bytes.

import FlagAPI
import FlagCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let choice = input.byte()
    let payload = Array(input.bytes)
    let asQuery = choice & 0x80 != 0
    let body = asQuery ? [] : payload
    let query = asQuery ? queryItems(payload) : [:]
    switch Int(choice & 0x7F) % 28 {
    case 0: request(ChangeRequest.self, body, query)
    case 1: request(PutFlagRequest.self, body, query)
    case 2: request(RolloutRequest.self, body, query)
    case 3: request(RuleRequest.self, body, query)
    case 4: request(OverrideRequest.self, body, query)
    case 5: request(ExpireRequest.self, body, query)
    case 6: request(CreateTokenRequest.self, body, query)
    case 7: request(SettingsRequest.self, body, query)
    case 8: request(EvaluateRequest.self, body, query)
    case 9: request(HistoryQuery.self, body, query)
    case 10: request(ClientsQuery.self, body, query)
    case 11: request(ImportRequest.self, body, query)
    case 12: answer(ErrorAnswer.self, payload)
    case 13: answer(MutationResult.self, payload)
    case 14: answer(FlagList.self, payload)
    case 15: answer(ClientsAnswer.self, payload)
    case 16: answer(PropagationAnswer.self, payload)
    case 17: answer(SetList.self, payload)
    case 18: answer(ImportAnswer.self, payload)
    case 19: request(ScheduleRequest.self, body, query)
    case 20: request(ChangeListQuery.self, body, query)
    case 21: answer(ChangeAnswer.self, payload)
    case 22: answer(ChangeList.self, payload)
    case 23: request(PrerequisiteRequest.self, body, query)
    case 24: request(PromoteRequest.self, body, query)
    case 25: request(CreateWebhookRequest.self, body, query)
    case 26: answer(WebhookAnswer.self, payload)
    default: answer(SettingsAnswer.self, payload)
    }
    return 0
}

/// `a=1&b=x` as the server's router hands it over: the first value of each name.
private func queryItems(_ bytes: [UInt8]) -> [String: String] {
    var items: [String: String] = [:]
    for pair in bytes.split(separator: UInt8(ascii: "&")) {
        let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(decoding: parts[0], as: UTF8.self)
        if items[name] == nil { items[name] = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : "" }
    }
    return items
}

private func request<Request: APIRequest>(_ type: Request.Type, _ body: [UInt8], _ query: [String: String]) {
    let read: Request
    do {
        read = try WireDecoder.decodeRequest(type, body: body, query: query)
    } catch {
        checkRefusal(error, of: "\(type)", body: body)
        return
    }
    do {
        let written = try WireEncoder.encode(read)
        let again = try WireDecoder.decodeRequest(type, body: written, query: [:])
        check(try WireEncoder.encode(again) == written, "\(type) is not written canonically: \(text(written))")
    } catch {
        fail("an accepted \(type) does not read back from its own encoding: \(error)")
    }
}

private func answer<Answer: APIAnswer>(_ type: Answer.Type, _ bytes: [UInt8]) {
    let read: Answer
    do {
        read = try Answer.decode(answer: bytes)
    } catch {
        checkRefusal(error, of: "\(type)", body: bytes)
        return
    }
    do {
        let written = try read.encodedAnswer()
        check(try Answer.decode(answer: written).encodedAnswer() == written, "\(type) is not written canonically")
    } catch {
        fail("an accepted \(type) does not read back from its own encoding: \(error)")
    }
}

/// A refusal names its member, or says what is wrong with the bytes as a whole; JSON that `JSONReader` reads is
/// never refused as not JSON.
private func checkRefusal(_ error: WireFormatError, of type: String, body: [UInt8]) {
    check(!error.message.isEmpty, "\(type): a refusal without a message")
    guard error.field == nil else { return }
    if error.message.hasPrefix("is not valid JSON") {
        check((try? JSONReader.parse(body)) == nil, "\(type): refused as not JSON, but JSONReader reads it")
    }
}
