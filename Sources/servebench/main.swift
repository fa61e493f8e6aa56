import FlagCore
import FlagHTTP
import FlagServer
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

// servebench: the serving path in one process, for instruction counts. valgrind cannot run `flagserver` (it dies
// in the main thread parked in `dispatchMain`), and on a shared machine req/s and even CPU time per request move
// by a factor of two between runs; the instructions a request costs do not. One loop thread serves one keep-alive
// connection that this process's main thread drives request by request:
//
//   valgrind --tool=callgrind --separate-threads=yes .build/release/servebench 304 20000
//
// gives the loop thread's instructions; running it with two counts and taking the difference removes start-up.
// Without valgrind it prints the wall time per request.
//   servebench 304|200 COUNT [SEED]    SEED: the flag set document to serve (default config/flagsets/demo.json)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("servebench: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2, ["200", "304"].contains(arguments[0]), let count = Int(arguments[1]), count > 0 else {
    fail("usage: servebench 304|200 COUNT [SEED]")
}
let conditional = arguments[0] == "304"
let seedPath = arguments.count > 2 ? arguments[2] : "config/flagsets/demo.json"

let server: HTTPServer
let request: [UInt8]
do {
    let store = try SQLiteFlagStore.inMemory()
    let service = try FlagService(store: store, clock: .system)
    let tokens = try TokenAuthority(tokens: store.tokens, clock: .system, environmentToken: nil)
    let note = ChangeNote(actor: "servebench", action: "set.create")
    let seed = try FlagSet.decode(Array(try Data(contentsOf: URL(fileURLWithPath: seedPath))))
    let state = try service.createSet("demo", from: seed, note: note)
    let key = try tokens.issue(
        name: "bench", role: .sdk(set: "demo"), note: ChangeNote(actor: "servebench", action: "key.create")
    ).token
    let app = FlagServerApp(service: service, tokens: tokens, clock: .system)
    server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, loopCount: 1), handler: app.handler)
    let port = try server.start()
    // What wrk sends in Benchmarks/serve: Host, the SDK key, and for the 304 path the current tag.
    var head = "GET /v1/sets/demo HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAuthorization: Bearer \(key)\r\n"
    if conditional { head += "If-None-Match: \"\(state.version)\"\r\n" }
    request = Array((head + "\r\n").utf8)
} catch {
    fail("\(error)")
}
guard let port = server.port else { fail("the server did not start") }

let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
var address = sockaddr_in()
address.sin_family = sa_family_t(AF_INET)
address.sin_port = in_port_t(UInt16(port).bigEndian)
address.sin_addr.s_addr = inet_addr("127.0.0.1")
let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
}
guard fd >= 0, connected == 0 else { fail("cannot connect to port \(port)") }

/// Reads one response (head, then `Content-Length` bytes of body); returns its status.
func readResponse(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
    guard let base = buffer.baseAddress else { fail("no read buffer") }
    var filled = 0
    while true {
        let got = read(fd, base + filled, buffer.count - filled)
        guard got > 0 else { fail("the server closed the connection") }
        filled += got
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<filled])
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { continue }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let status = Int(head.dropFirst(9).prefix(3)) ?? 0
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        while filled < end.upperBound + length {
            let more = read(fd, base + filled, buffer.count - filled)
            guard more > 0 else { fail("the server closed the connection") }
            filled += more
        }
        return status
    }
}

let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 8)
let expected = conditional ? 304 : 200
let start = ContinuousClock.now
for _ in 0..<count {
    let sent = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard sent == request.count else { fail("short write") }
    let status = readResponse(buffer)
    guard status == expected else { fail("answered \(status), not \(expected)") }
}
let elapsed = ContinuousClock.now - start
close(fd)
server.shutdown(deadline: .seconds(1))
let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
print("\(count) requests (\(arguments[0])), \(String(format: "%.1f", nanoseconds / Double(count) / 1000)) µs each")
