import FlagHTTP
import FlagTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The event loop watches the application's own descriptors (a database's notification socket, later): a callback
/// on the loop thread per readable event, until cancelled.
@Suite("HTTP server: watching other descriptors on the event loop")
struct HTTPWatchTests {
    /// A pipe, closed at the end of the test.
    final class Pipe: Sendable {
        let read: Int32
        let write: Int32

        init() throws {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw TimedOut("pipe() failed: errno \(errno)") }
            (read, write) = (ends[0], ends[1])
        }

        func send(_ byte: UInt8) {
            var byte = byte
            _ = Glibc.write(write, &byte, 1)
        }

        deinit {
            close(read)
            close(write)
        }
    }

    @Test func aWatchedDescriptorRunsItsCallbackOnTheLoopUntilCancelled() throws {
        let pipe = try Pipe()
        let received = Mutex<[UInt8]>([])
        let callerThread = pthread_self()
        let onLoopThread = Mutex<Bool?>(nil)
        let oneLoop: (inout HTTPServerConfiguration) -> Void = { $0.loopCount = 1 }
        try withServer(oneLoop, handler: basicHandler) { server, _ in
            let watch = try server.watch(pipe.read) {
                var byte: UInt8 = 0
                guard Glibc.read(pipe.read, &byte, 1) == 1 else { return }
                received.withLock { $0.append(byte) }
                onLoopThread.withLock { $0 = pthread_equal(pthread_self(), callerThread) == 0 }
            }
            pipe.send(1)
            pipe.send(2)
            #expect(waitUntil(timeout: .seconds(5), every: .milliseconds(5)) { received.withLock { $0.count } == 2 })
            #expect(received.withLock { $0 } == [1, 2])
            #expect(onLoopThread.withLock { $0 } == true)
            watch.cancel()
            watch.cancel()
            pipe.send(3)
            // The loop keeps serving; the cancelled watch hears nothing more.
            let client = try TestClient(port: server.port ?? 0)
            client.send("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(received.withLock { $0 } == [1, 2])
        }
    }

    @Test func watchingNeedsARunningServerAndAPollableDescriptor() throws {
        let idle = HTTPServer(configuration: HTTPServerConfiguration(port: 0), handler: basicHandler)
        #expect(throws: HTTPServerError.self) { try idle.watch(0) {} }
        let oneLoop: (inout HTTPServerConfiguration) -> Void = { $0.loopCount = 1 }
        try withServer(oneLoop, handler: basicHandler) { server, _ in
            // A regular file cannot be polled: epoll refuses it, and the error says which descriptor.
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(UUID().uuidString)").path
            let file = open(path, O_CREAT | O_RDWR, 0o600)
            defer {
                close(file)
                unlink(path)
            }
            let error = #expect(throws: HTTPServerError.self) { try server.watch(file) {} }
            #expect(error?.description.contains("descriptor \(file)") == true)
        }
    }
}
