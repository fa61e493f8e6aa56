import FlagCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a command's output goes: standard output for results, standard error for warnings and errors.
///
/// Output is buffered (an `eval --units-file` of a million units is a million lines) and flushed before anything
/// is written to standard error, so that the two keep their order on a terminal. Used from one thread.
///
/// Every line passes through `escapingControlCharacters`, so no control character from a server or a file reaches
/// the terminal: flag descriptions, audit reasons and telemetry names are written by anyone with an editor token or a
/// shipped SDK key, and an ESC among them could rewrite the screen or set the window title. A line is one line: a
/// line break inside it is shown as `\n`. Only `printText`, for flagctl's own text of several lines, keeps them.
package final class Console {
    private let writeOutput: ([UInt8]) -> Void
    private let writeError: ([UInt8]) -> Void
    private var buffer: [UInt8] = []
    private static let bufferLimit = 64 * 1024
    /// Whether a status line (`status(_:)`) is on the screen, to be replaced by the next line.
    private var showsStatus = false

    /// Whether standard output is a terminal: a live status line there is redrawn in place; elsewhere (a pipe, a
    /// file, a CI log) only final lines are written.
    package let isTerminal: Bool

    /// Creates a console over two byte sinks.
    package init(
        writeOutput: @escaping ([UInt8]) -> Void, writeError: @escaping ([UInt8]) -> Void, isTerminal: Bool = false
    ) {
        self.writeOutput = writeOutput
        self.writeError = writeError
        self.isTerminal = isTerminal
        buffer.reserveCapacity(Self.bufferLimit)
    }

    /// A console on the process's standard output and standard error.
    package static func standardStreams() -> Console {
        Console(writeOutput: { writeAll($0, to: 1) }, writeError: { writeAll($0, to: 2) }, isTerminal: isatty(1) == 1)
    }

    /// Shows `line` on a terminal in place of the previous status line, at once; the next `print` replaces it. Does
    /// nothing when standard output is not a terminal.
    package func status(_ line: String) {
        guard isTerminal else { return }
        clearStatus()
        buffer.append(contentsOf: line.escapingControlCharacters().utf8)
        showsStatus = true
        flush()
    }

    /// Returns to the start of the line and erases it (ANSI `EL`), when a status line is shown.
    private func clearStatus() {
        guard showsStatus else { return }
        buffer.append(contentsOf: "\r\u{1B}[2K".utf8)
        showsStatus = false
    }

    /// Writes a line (a newline is added) to standard output, its control characters escaped, line breaks included.
    package func print(_ line: String) {
        append(line.escapingControlCharacters())
    }

    /// Writes flagctl's own text of several lines (help, an exported document, a generated Swift file) to standard
    /// output, a newline added: its line breaks are kept, every other control character is escaped. Text that quotes a
    /// server or a file goes line by line through `print`, so that a line break in a value cannot start a line.
    package func printText(_ text: String) {
        append(text.escapingControlCharacters(keepingLineBreaks: true))
    }

    private func append(_ text: String) {
        clearStatus()
        buffer.append(contentsOf: text.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= Self.bufferLimit { flush() }
    }

    /// Writes a line (a newline is added) to standard error, after everything printed so far, its control characters
    /// escaped, line breaks included: an error quoting a server's message stays one line.
    package func printError(_ line: String) {
        clearStatus()
        flush()
        writeError(Array(line.escapingControlCharacters().utf8) + [UInt8(ascii: "\n")])
    }

    /// Writes buffered output.
    package func flush() {
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
