import FlagTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ways to break the file system under the cache: a small full tmpfs, and files or directories made read-only even
/// for root (who ignores permission bits: the immutable attribute is used then). Each probe runs once; a test that
/// needs what the sandbox does not allow is disabled rather than passing without checking anything.
enum ChaosFileSystem {
    #if os(Linux)
        /// `FS_IOC_GETFLAGS` / `FS_IOC_SETFLAGS` and `FS_IMMUTABLE_FL` from <linux/fs.h> (64-bit).
        private static let getFlags: UInt = 0x8008_6601
        private static let setFlags: UInt = 0x4008_6602
        private static let immutable: Int32 = 0x10
    #endif

    /// Whether a tmpfs can be mounted here (root with CAP_SYS_ADMIN, Linux).
    static let canMountTmpfs: Bool = {
        #if os(Linux)
            guard let probe = try? TemporaryDirectory() else { return false }
            // The directory must outlive the mount on it.
            return withExtendedLifetime(probe) {
                guard let mount = TmpfsMount(at: probe.url, kilobytes: 64) else { return false }
                mount.unmount()
                return true
            }
        #else
            return false
        #endif
    }()

    /// Whether files and directories can be made read-only for this process.
    static let canMakeReadOnly: Bool = {
        guard let probe = try? TemporaryDirectory() else { return false }
        // Writable again before the directory is removed.
        defer { setReadOnly(probe.url, false) }
        guard setReadOnly(probe.url, true) else { return false }
        return !FileManager.default.createFile(atPath: probe.url.appendingPathComponent("x").path, contents: Data())
    }()

    /// Makes `url` (a file or a directory) read-only, or writable again; `false` when that failed.
    @discardableResult
    static func setReadOnly(_ url: URL, _ readOnly: Bool) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return false }
        let mode: mode_t = readOnly ? (isDirectory.boolValue ? 0o555 : 0o444) : (isDirectory.boolValue ? 0o755 : 0o644)
        if !readOnly { _ = setImmutable(url, false) }
        guard chmod(url.path, mode) == 0 else { return false }
        if readOnly, geteuid() == 0 { return setImmutable(url, true) }
        return true
    }

    private static func setImmutable(_ url: URL, _ on: Bool) -> Bool {
        #if os(Linux)
            let fd = open(url.path, O_RDONLY | O_NONBLOCK)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var flags: Int32 = 0
            guard ioctl(fd, getFlags, &flags) == 0 else { return false }
            flags = on ? flags | immutable : flags & ~immutable
            return ioctl(fd, setFlags, &flags) == 0
        #else
            return false
        #endif
    }
}

/// A tmpfs of a few kilobytes mounted on a test's directory: a file system that fills up for real.
final class TmpfsMount: Sendable {
    let path: String

    /// Mounts a tmpfs of `kilobytes` at `url`; `nil` when the sandbox does not allow it.
    init?(at url: URL, kilobytes: Int) {
        #if os(Linux)
            let mounted = "size=\(kilobytes)k,mode=0755".withCString { options in
                mount("tmpfs", url.path, "tmpfs", 0, options)
            }
            guard mounted == 0 else { return nil }
            path = url.path
        #else
            return nil
        #endif
    }

    /// Fills the file system with a file until it is full; returns the file.
    func fill() -> URL {
        let url = URL(fileURLWithPath: path).appendingPathComponent("filler")
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 {
            let block = [UInt8](repeating: 0xAA, count: 4096)
            while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            // The last pages: one byte at a time, until not one more fits.
            var byte: UInt8 = 0
            while write(fd, &byte, 1) > 0 {}
            close(fd)
        }
        return url
    }

    /// Detaches the mount (lazily: open files of a test that failed must not keep it busy).
    func unmount() {
        #if os(Linux)
            _ = umount2(path, Int32(MNT_DETACH))
        #endif
    }
}
