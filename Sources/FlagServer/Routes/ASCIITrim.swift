extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace). Foundation's
    /// `trimmingCharacters(in:)` bridges through NSString and showed up in the per-request profile.
    func trimmingHTTPSpaces() -> Substring {
        let text = Substring(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        let last = text.lastIndex(where: { !isSpace($0) }) ?? first
        return text[first...last]
    }
}
