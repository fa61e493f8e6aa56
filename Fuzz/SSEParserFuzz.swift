// libFuzzer harness for the client's Server-Sent Events parser. Run with `Fuzz/run sse`.
//
// The first input byte picks the line limit (none that a 4 KiB input reaches, or 1, 8 or 64 bytes), the next three
// how the rest is split into reads. Properties checked on every input; a violation traps:
// - the items do not depend on how the stream is split into reads (inside a line, between CR and LF, inside a
//   UTF-8 sequence), nor does the last event id;
// - with no limit reached, the items equal those of a plain reference reader written from the WHATWG rules, which
//   only ever looks at complete lines: no item is made of a partial line;
// - no event type, id, signature, comment or data holds a CR, and only data holds LFs (between its lines);
// - with a limit, no event's data, type, id, signature or comment holds more than the limit (counted in scalars,
//   each at most one byte of input), so a hostile stream cannot make the client hold unbounded memory;
// - `reset()` forgets the partial line and event but keeps the last id.

@testable import FlagClient

private let limitChoices = [1 << 20, 1, 8, 64]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limit = input.pick(limitChoices)
    let sizes = input.readSizes(upTo: 16, 16, 16)
    let stream = Array(input.bytes)

    var whole = SSEParser(maximumLineLength: limit)
    let items = whole.feed(stream)
    var split = SSEParser(maximumLineLength: limit)
    var splitItems: [SSEItem] = []
    for piece in pieces(stream, sizes: sizes) { splitItems += split.feed(piece) }
    check(items == splitItems, "reads of \(sizes) give \(splitItems), all at once \(items): \(text(stream))")
    check(
        whole.lastID == split.lastID,
        "reads of \(sizes) end with id \(split.lastID as Any), "
            + "not \(whole.lastID as Any)")

    for item in items {
        switch item {
        case .event(let event):
            check(!event.data.utf8.contains(0x0D), "data with a CR: \(event.data.debugDescription)")
            for field in [event.type, event.id ?? "", event.signature ?? ""] {
                check(!field.utf8.contains(0x0D) && !field.utf8.contains(0x0A), "a line break in \(event)")
            }
            check(!event.type.isEmpty && !(event.id ?? "").utf8.contains(0), "event \(event)")
            if limit < stream.count {
                check(event.data.unicodeScalars.count <= limit, "data of \(event.data.utf8.count) bytes > \(limit)")
                check((event.id ?? "").unicodeScalars.count <= limit, "an id longer than \(limit): \(event)")
                check((event.signature ?? "").unicodeScalars.count <= limit, "a signature over \(limit): \(event)")
                check(event.type == "message" || event.type.unicodeScalars.count <= limit, "a type over \(limit)")
            }
        case .comment(let comment):
            check(!comment.utf8.contains(0x0D) && !comment.utf8.contains(0x0A), "a line break in \(comment)")
            check(comment.unicodeScalars.count <= limit, "a comment longer than \(limit)")
        case .retry(let milliseconds):
            check(milliseconds >= 0, "retry \(milliseconds)")
        }
    }
    if limit >= stream.count {
        var reference = ReferenceReader()
        let expected = reference.read(stream)
        check(items == expected, "the reference reads \(expected), the parser \(items): \(text(stream))")
        check(whole.lastID == reference.lastID, "the reference ends with id \(reference.lastID as Any)")
    }

    // After a reset a well-formed event reads whole, whatever partial line came before; the id is kept.
    let idBefore = whole.lastID
    whole.reset()
    check(whole.lastID == idBefore, "reset() dropped the last id")
    let after = whole.feed(Array("data: x\n\n".utf8))
    if limit >= 7 {
        check(after == [.event(SSEEvent(type: "message", data: "x", id: idBefore))], "after reset: \(after)")
    }
    return 0
}

/// The WHATWG event-stream interpretation, over the complete lines of the whole input; a line without its end
/// is never looked at.
private struct ReferenceReader {
    var lastID: String?
    private var type = ""
    private var data: [UInt8]?
    private var signature: String?

    mutating func read(_ bytes: [UInt8]) -> [SSEItem] {
        var items: [SSEItem] = []
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0D || byte == 0x0A {
                lines.append(bytes[start..<index])
                if byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A { index += 1 }
                start = index + 1
            }
            index += 1
        }
        if var first = lines.first, first.starts(with: [0xEF, 0xBB, 0xBF]) {
            first.removeFirst(3)
            lines[0] = first
        }
        for line in lines { process(line, into: &items) }
        return items
    }

    private mutating func process(_ line: ArraySlice<UInt8>, into items: inout [SSEItem]) {
        if line.isEmpty {
            if let data {
                let text = String(decoding: data, as: UTF8.self)
                items.append(
                    .event(
                        SSEEvent(type: type.isEmpty ? "message" : type, data: text, id: lastID, signature: signature)))
            }
            type = ""
            data = nil
            signature = nil
            return
        }
        let colon = line.firstIndex(of: 0x3A)
        if colon == line.startIndex {
            let comment = line.dropFirst().first == 0x20 ? line.dropFirst(2) : line.dropFirst()
            items.append(.comment(String(decoding: comment, as: UTF8.self)))
            return
        }
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        switch name {
        case "event": type = String(decoding: value, as: UTF8.self)
        case "data": data = data.map { $0 + [0x0A] + value } ?? Array(value)
        case "id" where !value.contains(0): lastID = String(decoding: value, as: UTF8.self)
        case "signature": signature = String(decoding: value, as: UTF8.self)
        case "retry" where !value.isEmpty && value.allSatisfy({ (0x30...0x39).contains($0) }):
            if let milliseconds = Int(String(decoding: value, as: UTF8.self)) { items.append(.retry(milliseconds)) }
        default: break
        }
    }
}
