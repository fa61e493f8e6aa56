#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command's output goes: standard output for results, standard error for warnings and errors.
///
/// Output is buffered (an `eval --units-file` of a million units is a million lines) and flushed before anything
/// is written to standard error, so that the two keep their order on a terminal. Used from one thread.
public final class Console {
    private let writeOutput: ([UInt8]) -> Void
    private let writeError: ([UInt8]) -> Void
    private var buffer: [UInt8] = []
    private static let bufferLimit = 64 * 1024

    /// Creates a console over two byte sinks.
    public init(writeOutput: @escaping ([UInt8]) -> Void, writeError: @escaping ([UInt8]) -> Void) {
        self.writeOutput = writeOutput
        self.writeError = writeError
        buffer.reserveCapacity(Self.bufferLimit)
    }

    /// A console on the process's standard output and standard error.
    public static func standardStreams() -> Console {
        Console(writeOutput: { writeAll($0, to: 1) }, writeError: { writeAll($0, to: 2) })
    }

    /// Writes a line (a newline is added) to standard output.
    public func print(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= Self.bufferLimit { flush() }
    }

    /// Writes a line (a newline is added) to standard error, after everything printed so far.
    public func printError(_ line: String) {
        flush()
        writeError(Array(line.utf8) + [UInt8(ascii: "\n")])
    }

    /// Writes buffered output.
    public func flush() {
        guard !buffer.isEmpty else { return }
        writeOutput(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes every byte to a file descriptor, retrying short writes and interruptions. Other errors (a closed
    /// pipe, a full disk) drop the output: there is nowhere left to report them.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { raw in
            guard var pointer = raw.baseAddress else { return }
            var remaining = raw.count
            while remaining > 0 {
                let written = write(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                pointer += written
                remaining -= written
            }
        }
    }
}
