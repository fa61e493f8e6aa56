import FlagCore

/// A response as a test reads it, whichever way it came: from the handler in process or off a socket.
public struct TestResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields in the order they came.
    public var headers: [(name: String, value: String)]
    /// The body; empty for a response head read on its own.
    public var body: [UInt8]

    /// A response from its parts.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first field named `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as JSON.
    public func json() throws -> JSONValue { try JSONReader.parse(body) }

    /// A member of a JSON object body, by a dotted path with array indexes (`error.code`, `flag.rules[1].name`).
    public func json(_ path: String) throws -> JSONValue? {
        var value: JSONValue? = try json()
        for part in path.split(separator: ".") {
            var name = Substring(part)
            var indexes: [Int] = []
            while name.hasSuffix("]"), let open = name.lastIndex(of: "["),
                let index = Int(name[name.index(after: open)..<name.index(before: name.endIndex)])
            {
                indexes.insert(index, at: 0)
                name = name[..<open]
            }
            guard case .object(let members)? = value else { return nil }
            value = members[String(name)]
            for index in indexes {
                guard case .array(let items)? = value, items.indices.contains(index) else { return nil }
                value = items[index]
            }
        }
        return value
    }
}

/// Reads HTTP/1.1 responses out of the bytes a client received.
enum ResponseParser {
    /// The index of the `\r\n\r\n` that ends a head starting at `start`, or nil while it has not arrived.
    static func headEnd(in bytes: [UInt8], from start: Int = 0) -> Int? {
        guard bytes.count - start >= 4 else { return nil }
        for index in start...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The status and fields of a head (without its final blank line); nil if the status line is not HTTP/1.1's.
    static func head(_ bytes: ArraySlice<UInt8>) -> TestResponse? {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, parts[0] == "HTTP/1.1", let status = Int(parts[1]) else { return nil }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), trimmingSpaces(line[line.index(after: colon)...]))
        }
        return TestResponse(status: status, headers: headers)
    }

    /// One complete response starting at `start` (a body delimited by `Content-Length`, or none for 1xx, 204, 304
    /// and answers to HEAD), and where the next one starts; nil while it has not all arrived.
    static func response(in bytes: [UInt8], from start: Int = 0, headRequest: Bool = false) throws -> (
        TestResponse, next: Int
    )? {
        guard let end = headEnd(in: bytes, from: start) else { return nil }
        guard var response = head(bytes[start..<end]) else {
            let line = String(decoding: bytes[start..<end], as: UTF8.self)
            throw TestClientError(description: "bad status line: \(line)")
        }
        let bodyStart = end + 4
        let noBody = headRequest || response.status < 200 || response.status == 204 || response.status == 304
        let length = noBody ? 0 : Int(response.header("content-length") ?? "") ?? 0
        guard bytes.count - bodyStart >= length else { return nil }
        response.body = Array(bytes[bodyStart..<(bodyStart + length)])
        return (response, bodyStart + length)
    }

    /// Every complete response in `bytes`, in order, up to the first that is cut short or is not a response.
    static func responses(in bytes: [UInt8]) -> [TestResponse] {
        var result: [TestResponse] = []
        var offset = 0
        while let found = try? Self.response(in: bytes, from: offset) {
            result.append(found.0)
            offset = found.next
        }
        return result
    }

    private static func trimmingSpaces(_ text: Substring) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
