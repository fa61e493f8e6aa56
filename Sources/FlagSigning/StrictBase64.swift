import Foundation

/// Standard base64 with padding (RFC 4648 §4), read strictly: one encoding for given bytes, so that a key or a
/// signature has one spelling, and a reason that says what is wrong with text that is not that.
enum StrictBase64 {
    /// Why text is not standard base64; `reason` completes a sentence that names the text ("… is empty").
    struct Problem: Error {
        let reason: String
    }

    /// The bytes `text` encodes.
    static func decode(_ text: String) throws(Problem) -> [UInt8] {
        if text.isEmpty {
            throw Problem(reason: "is empty")
        }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            throw Problem(reason: "contains whitespace or a line break (a value read from a file often ends in one)")
        }
        if text.contains("-") || text.contains("_") {
            throw Problem(reason: "uses the URL-safe alphabet ('-', '_') where standard base64 has '+' and '/'")
        }
        let count = text.utf8.count
        if count % 4 != 0 {
            throw Problem(
                reason: "is \(count) characters long, not a multiple of 4: standard base64 is padded with '='")
        }
        guard let data = Data(base64Encoded: text) else {
            throw Problem(reason: "has characters outside standard base64, or '=' before the end")
        }
        let bytes = [UInt8](data)
        guard encode(bytes) == text else {
            throw Problem(
                reason: "is not the canonical encoding of its bytes (the unused bits before '=' must be zero)")
        }
        return bytes
    }

    /// The bytes `text` encodes, or the error `refusal` makes of the reason why it is not standard base64.
    static func decode(_ text: String, orThrow refusal: (_ reason: String) -> SigningError) throws(SigningError)
        -> [UInt8]
    {
        do {
            return try decode(text)
        } catch {
            throw refusal(error.reason)
        }
    }

    /// `bytes` in standard base64 with padding.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }
}
