/// The events of a set's Server-Sent Events stream (SPEC §4), by their `event:` name, and what each one's `data`
/// holds. The framing itself (`event:`, `id:`, `data:` lines) is the HTTP layer's.
public enum SetStreamEvent: String, Sendable, CaseIterable {
    /// `data` is the whole document (`FlagSet.decode`), `id` its version: sent on connect.
    case put
    /// `data` is a `SetPatch`, `id` the version it makes: sent once per version.
    case patch
}
