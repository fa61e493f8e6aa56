/// The chunked transfer coding (RFC 9112 §7.1): sizes, extensions (accepted and ignored), data, trailers.
extension HTTPRequestParser {
    enum ChunkStep {
        case needMoreInput
        case `continue`
        case event(HTTPParserEvent)
    }

    mutating func stepChunked(_ raw: UnsafeRawBufferPointer) -> ChunkStep {
        switch state {
        case .chunkSize:
            switch findLine(raw) {
            case .incomplete(let available):
                if available > limits.maxChunkLineBytes + 1 {
                    return .event(fail(.chunkLineTooLong(limits)))
                }
                return .needMoreInput
            case .bareLineFeed:
                return .event(fail(.badRequest, "bare LF after a chunk size; use CRLF"))
            case .complete(let line):
                guard line.count <= limits.maxChunkLineBytes else {
                    return .event(fail(.chunkLineTooLong(limits)))
                }
                readIndex = line.upperBound + 2
                let size: Int
                switch Self.parseChunkSize(UnsafeRawBufferPointer(rebasing: raw[line])) {
                case .failure(let rejection): return .event(fail(rejection))
                case .success(let value): size = value
                }
                if size == 0 {
                    state = .trailerFields
                } else if size > limits.maxBodyBytes - body.count {
                    return .event(fail(.bodyTooLarge("chunked body", limits)))
                } else {
                    state = .chunkData(remaining: size)
                }
                return .continue
            }
        case .chunkData(let remaining):
            let left = readBody(raw, remaining: remaining)
            guard left == 0 else {
                state = .chunkData(remaining: left)
                return .needMoreInput
            }
            state = .chunkDataEnd
            return .continue
        case .chunkDataEnd:
            let available = raw.count - readIndex
            guard available > 0 else { return .needMoreInput }
            guard raw[readIndex] == ASCII.cr, available < 2 || raw[readIndex + 1] == ASCII.lf else {
                return .event(fail(.badRequest, "chunk data is not followed by CRLF (chunk size too small?)"))
            }
            guard available >= 2 else { return .needMoreInput }
            readIndex += 2
            state = .chunkSize
            return .continue
        case .trailerFields:
            switch findLine(raw) {
            case .incomplete(let available):
                if trailerBytes + available + 1 > limits.maxHeaderBytes {
                    return .event(fail(.headTooLarge("trailer section", limits)))
                }
                return .needMoreInput
            case .bareLineFeed(let length):
                if trailerBytes + length + 1 > limits.maxHeaderBytes {
                    return .event(fail(.headTooLarge("trailer section", limits)))
                }
                return .event(fail(.badRequest, "bare LF in the trailer section; use CRLF"))
            case .complete(let line):
                readIndex = line.upperBound + 2
                trailerBytes += line.count + 2
                if trailerBytes > limits.maxHeaderBytes {
                    return .event(fail(.headTooLarge("trailer section", limits)))
                }
                if line.isEmpty { return .event(completeRequest()) }
                trailerCount += 1
                if trailerCount > limits.maxHeaderCount {
                    return .event(fail(.tooManyFields("trailer", limits)))
                }
                // Trailers are validated like header fields but not merged into the headers (RFC 9110 §6.5.1).
                if case .failure(let rejection) = Self.splitField(UnsafeRawBufferPointer(rebasing: raw[line])) {
                    return .event(fail(rejection))
                }
                return .continue
            }
        case .requestLine, .headerFields, .body, .failed:
            return .needMoreInput
        }
    }

    /// `1*HEXDIG [BWS ";" chunk-ext]`; the extensions are checked for forbidden bytes and otherwise ignored.
    static func parseChunkSize(_ line: UnsafeRawBufferPointer) -> Result<Int, HTTPRejection> {
        var value = 0
        var index = 0
        while index < line.count, let digit = ASCII.hexValue(line[index]) {
            guard value <= (Int.max - 15) / 16 else {
                return .failure(HTTPRejection(.badRequest, "chunk size overflows"))
            }
            value = value * 16 + digit
            index += 1
        }
        guard index > 0 else { return .failure(HTTPRejection(.badRequest, "invalid chunk size: expected hex digits")) }
        while index < line.count, ASCII.isWhitespace(line[index]) { index += 1 }
        guard index < line.count else { return .success(value) }
        guard line[index] == ASCII.semicolon else {
            return .failure(HTTPRejection(.badRequest, "invalid byte 0x\(hex(line[index])) after the chunk size"))
        }
        for byte in line[index...] where !ASCII.isFieldValueByte(byte) {
            return .failure(HTTPRejection(.badRequest, "invalid byte 0x\(hex(byte)) in a chunk extension"))
        }
        return .success(value)
    }
}
