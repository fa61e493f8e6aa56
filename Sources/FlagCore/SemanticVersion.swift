/// A Semantic Versioning 2.0.0 version (https://semver.org), parsed strictly and ordered by precedence.
///
/// `==` and `<` follow precedence (SemVer §11): build metadata is parsed and validated but ignored, so
/// `1.0.0+a == 1.0.0+b`; `hash(into:)` ignores it too. `description` keeps the text as written.
/// Numeric identifiers have no size limit: they are compared by length, then digit by digit, never converted.
///
/// ```swift
/// SemanticVersion("1.0.0-beta.11")! > SemanticVersion("1.0.0-beta.2")!  // true
/// SemanticVersion("v1.2.3")                                           // nil: no "v" prefix
/// ```
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The version as written, build metadata included; always native UTF-8 so its bytes can be read in place.
    private let text: String
    // UTF-8 offsets into `text` of the '.' ending major and minor, of the end of patch ('-', '+' or the end), and
    // of the end of the pre-release ('+' or the end). The pre-release is present when `patchEnd < preEnd`.
    private let majorEnd: Int
    private let minorEnd: Int
    private let patchEnd: Int
    private let preEnd: Int

    /// Parses a version; nil unless the whole string is a valid SemVer 2.0.0 version.
    ///
    /// Rejects leading zeros in numeric identifiers, empty identifiers, characters outside `[0-9A-Za-z-]`,
    /// a "v" prefix, surrounding whitespace and missing or extra core components.
    public init?(_ string: String) {
        var text = string
        text.makeContiguousUTF8()
        guard let ends = text.withUTF8({ Self.scan($0) }) else { return nil }
        self.text = text
        (majorEnd, minorEnd, patchEnd, preEnd) = ends
    }

    /// Parses a version held in a substring; see `init?(_: String)`.
    public init?(_ string: Substring) {
        self.init(String(string))
    }

    /// Parses a version from any string type; see `init?(_: String)`.
    public init?<S: StringProtocol>(_ string: S) {
        self.init(String(decoding: string.utf8, as: UTF8.self))
    }

    /// The version as written, build metadata included.
    public var description: String { text }

    /// The major version in decimal digits (unbounded, hence text).
    public var major: Substring { slice(0, majorEnd) }
    /// The minor version in decimal digits.
    public var minor: Substring { slice(majorEnd + 1, minorEnd) }
    /// The patch version in decimal digits.
    public var patch: Substring { slice(minorEnd + 1, patchEnd) }
    /// Whether the version has a pre-release part, which gives it lower precedence than the plain version.
    public var isPreRelease: Bool { patchEnd < preEnd }
    /// The dot-separated pre-release identifiers, empty when there are none.
    public var preRelease: [Substring] {
        isPreRelease ? slice(patchEnd + 1, preEnd).split(separator: ".", omittingEmptySubsequences: false) : []
    }
    /// The dot-separated build metadata identifiers, empty when there are none; they play no part in precedence.
    public var buildMetadata: [Substring] {
        let count = text.utf8.count
        return preEnd < count ? slice(preEnd + 1, count).split(separator: ".", omittingEmptySubsequences: false) : []
    }

    /// Equal precedence: build metadata is ignored.
    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        // With no leading zeros allowed, equal precedence means identical bytes up to the build metadata.
        lhs.withPrecedenceBytes { a in rhs.withPrecedenceBytes { b in a.elementsEqual(b) } }
    }

    /// Lower precedence (SemVer §11).
    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        compare(lhs, rhs) < 0
    }

    // Spelled out because Comparable's generic defaults cost a copy through value witnesses on the hot path.

    /// Higher precedence.
    public static func > (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool { compare(lhs, rhs) > 0 }
    /// Lower or equal precedence.
    public static func <= (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool { compare(lhs, rhs) <= 0 }
    /// Higher or equal precedence.
    public static func >= (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool { compare(lhs, rhs) >= 0 }

    /// Hashes the bytes that decide precedence, consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        withPrecedenceBytes { hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0))) }
    }

    /// -1, 0 or 1 as `lhs` has lower, equal or higher precedence than `rhs`.
    public static func compare(_ lhs: SemanticVersion, _ rhs: SemanticVersion) -> Int {
        lhs.withPrecedenceBytes { a in
            rhs.withPrecedenceBytes { b in
                var order = compareNumeric(a[..<lhs.majorEnd], b[..<rhs.majorEnd])
                if order == 0 {
                    order = compareNumeric(a[(lhs.majorEnd + 1)..<lhs.minorEnd], b[(rhs.majorEnd + 1)..<rhs.minorEnd])
                }
                if order == 0 {
                    order = compareNumeric(a[(lhs.minorEnd + 1)..<lhs.patchEnd], b[(rhs.minorEnd + 1)..<rhs.patchEnd])
                }
                if order != 0 { return order }
                switch (lhs.isPreRelease, rhs.isPreRelease) {
                case (false, false): return 0
                case (false, true): return 1
                case (true, false): return -1
                case (true, true):
                    return comparePreRelease(a[(lhs.patchEnd + 1)...], b[(rhs.patchEnd + 1)...])
                }
            }
        }
    }

    private func slice(_ start: Int, _ end: Int) -> Substring {
        let utf8 = text.utf8
        return Substring(
            utf8[utf8.index(utf8.startIndex, offsetBy: start)..<utf8.index(utf8.startIndex, offsetBy: end)])
    }

    /// Calls `body` with the UTF-8 bytes of core and pre-release, without copying.
    private func withPrecedenceBytes<R>(_ body: (Slice<UnsafeBufferPointer<UInt8>>) -> R) -> R {
        let end = preEnd
        if let result = text.utf8.withContiguousStorageIfAvailable({ body($0[..<end]) }) { return result }
        // Unreachable for the native string `init` builds; kept so that no path can trap.
        var copy = text
        return copy.withUTF8 { body($0[..<end]) }
    }
}
