extension SemanticVersion {
    private static let dot = UInt8(ascii: ".")
    private static let hyphen = UInt8(ascii: "-")
    private static let plus = UInt8(ascii: "+")

    /// Validates the SemVer 2.0.0 grammar and returns the offsets that `init` stores, or nil.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int, Int, Int)? {
        var position = 0
        guard let majorEnd = scanNumeric(bytes, &position), skip(dot, bytes, &position),
            let minorEnd = scanNumeric(bytes, &position), skip(dot, bytes, &position),
            let patchEnd = scanNumeric(bytes, &position)
        else { return nil }
        var preEnd = patchEnd
        if skip(hyphen, bytes, &position) {
            guard scanIdentifiers(bytes, &position, allowLeadingZeros: false) else { return nil }
            preEnd = position
        }
        if skip(plus, bytes, &position) {
            guard scanIdentifiers(bytes, &position, allowLeadingZeros: true) else { return nil }
        }
        guard position == bytes.count else { return nil }
        return (majorEnd, minorEnd, patchEnd, preEnd)
    }

    /// Steps over `byte` if it comes next.
    private static func skip(_ byte: UInt8, _ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// A numeric identifier: `0` or a non-zero digit followed by digits. Returns its end offset.
    private static func scanNumeric(_ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> Int? {
        let start = position
        while position < bytes.count && isDigit(bytes[position]) { position += 1 }
        guard position > start, bytes[start] != UInt8(ascii: "0") || position - start == 1 else { return nil }
        return position
    }

    /// Dot-separated non-empty identifiers of `[0-9A-Za-z-]`; all-digit ones may need to lack leading zeros.
    /// Stops at the first byte that is neither an identifier character nor a dot.
    private static func scanIdentifiers(
        _ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int, allowLeadingZeros: Bool
    ) -> Bool {
        while true {
            let start = position
            var allDigits = true
            while position < bytes.count && isIdentifierByte(bytes[position]) {
                allDigits = allDigits && isDigit(bytes[position])
                position += 1
            }
            let length = position - start
            guard length > 0 else { return false }
            if allDigits && !allowLeadingZeros && length > 1 && bytes[start] == UInt8(ascii: "0") { return false }
            guard position < bytes.count && bytes[position] == dot else { return true }
            position += 1
        }
    }

    /// Compares two numeric identifiers without leading zeros: the longer is larger, else the first differing digit.
    static func compareNumeric(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        return compareBytes(a, b)
    }

    /// SemVer §11.4: identifier by identifier; numeric below alphanumeric; a prefix set is lower.
    static func comparePreRelease(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>)
        -> Int
    {
        var aStart = a.startIndex
        var bStart = b.startIndex
        while true {
            let aEnd = a[aStart...].firstIndex(of: dot) ?? a.endIndex
            let bEnd = b[bStart...].firstIndex(of: dot) ?? b.endIndex
            let aID = a[aStart..<aEnd]
            let bID = b[bStart..<bEnd]
            let aNumeric = aID.allSatisfy(isDigit)
            let bNumeric = bID.allSatisfy(isDigit)
            let order: Int
            switch (aNumeric, bNumeric) {
            case (true, true): order = compareNumeric(aID, bID)
            case (true, false): order = -1
            case (false, true): order = 1
            case (false, false): order = compareBytes(aID, bID)
            }
            if order != 0 { return order }
            let aDone = aEnd == a.endIndex
            let bDone = bEnd == b.endIndex
            if aDone || bDone { return aDone == bDone ? 0 : (aDone ? -1 : 1) }
            aStart = aEnd + 1
            bStart = bEnd + 1
        }
    }

    /// ASCII order, a prefix sorting first.
    private static func compareBytes(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: Slice<UnsafeBufferPointer<UInt8>>)
        -> Int
    {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
