import FlagCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading the files commands are given, with errors that name the file and what is wrong with it.
enum FileInput {
    /// Larger inputs are refused rather than read into memory: `/dev/zero` or a runaway file must not hang the tool.
    static let maximumSize = 64 * 1024 * 1024

    /// The whole file.
    static func contents(of path: String) throws(CLIError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .failure("cannot read '\(path)': \(systemError())") }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw .failure("cannot read '\(path)': it is a directory, not a file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw .failure("cannot read '\(path)': \(systemError())")
            }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > maximumSize {
                throw .failure("cannot read '\(path)': larger than \(maximumSize / 1024 / 1024) MiB")
            }
        }
    }

    private static func systemError() -> String {
        String(cString: strerror(errno))
    }

    /// Unit ids from a units file: one per line, surrounding blanks trimmed, blank lines and `#` comments
    /// skipped, LF or CRLF line ends.
    static func unitIDs(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self)
            .split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingBlanks() }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isBlank($0) }), let end = lastIndex(where: { !isBlank($0) }) else {
            return ""
        }
        return String(self[start...end])
    }
}

/// A flag-set file, read and compiled with FlagCore.
struct FlagSetFile {
    /// The path as given on the command line; messages name the file this way.
    let path: String
    /// The compiled set; `problems` lists what `lint` reports.
    let compiled: CompiledFlagSet

    /// Reads and compiles a file. A file that cannot be read throws; one that is not a flag-set document
    /// (malformed JSON, or not an object) returns the JSON error with its line and column.
    static func load(_ path: String) throws(CLIError) -> Result<FlagSetFile, JSONError> {
        let bytes = try FileInput.contents(of: path)
        do {
            let set = try FlagSet.decode(bytes)
            return .success(FlagSetFile(path: path, compiled: CompiledFlagSet(set)))
        } catch let error as JSONError {
            return .failure(error)
        } catch {
            throw .failure("cannot read '\(path)' as a flag set: \(error)")
        }
    }

    /// `demo.json:3:14: expected ',' or '}' in an object, found ']'`
    static func describe(_ error: JSONError, in path: String) -> String {
        "\(path):\(error.line):\(error.column): \(error.message)"
    }

    /// The flag keys in the file, readable or not, in byte order.
    var keys: [String] {
        (Array(compiled.flagSet.flags.keys) + Array(compiled.flagSet.unreadableFlags.keys)).sorted(by: utf8Less)
    }
}
