import Foundation

/// The instance ids `ClientTelemetry` issues.
extension ClientTelemetry {
    /// `in_` and 22 characters of base64url: 128 random bits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) } }
        let base64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "in_" + base64
    }

    /// Whether `id` has the shape of an id this server issues.
    static func isWellFormed(_ id: String) -> Bool {
        id.utf8.count == 25 && id.hasPrefix("in_")
            && id.utf8.dropFirst(3).allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "_")
            }
    }
}
