import FlagCore
import FlagLock
import Foundation

/// The local overrides in force (SPEC §6.4): API (debug menu) beats the environment, which beats the env file.
/// A value that does not fit its flag's type is reported once and ignored.
final class OverrideStore: Sendable {
    private struct Table: Sendable {
        var fileAndEnvironment: [String: RawOverride]
        var api: [String: String]
        /// A read-only client's own `setOverride` calls, over the overrides the app stored (`api`), which it reads
        /// again when the cache changes; `nil` clears one the app set.
        var inMemory: [String: String?] = [:]
        var merged: [String: RawOverride] = [:]
        var reported: Set<String> = []

        mutating func merge() {
            merged = fileAndEnvironment
            for (key, text) in api { merged[key] = RawOverride(text: text, source: "setOverride") }
            for (key, text) in inMemory {
                merged[key] = text.map { RawOverride(text: $0, source: "setOverride (in memory)") }
            }
        }
    }

    private let table: Locked<Table>
    private let log: @Sendable (FlagClientLogMessage.Level, String) -> Void

    init(
        fileAndEnvironment: [String: RawOverride], api: [String: String],
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) {
        var table = Table(fileAndEnvironment: fileAndEnvironment, api: api)
        table.merge()
        self.table = Locked(table)
        self.log = log
    }

    /// Builds the store from the env file and the environment, reporting each bad line once.
    static func load(
        file: String?, environment: [String: String], api: [String: String],
        log: @escaping @Sendable (FlagClientLogMessage.Level, String) -> Void
    ) -> OverrideStore {
        var overrides: [String: RawOverride] = [:]
        if let file = file ?? environment["FLAGS_OVERRIDE_FILE"], !file.isEmpty {
            do {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                let parsed = OverridesParser.parseFile(text, name: (file as NSString).lastPathComponent)
                overrides = parsed.overrides
                for problem in parsed.problems { log(.warning, "override ignored: \(problem)") }
            } catch {
                log(.warning, "override file \(file) cannot be read (\(error)); no file overrides apply")
            }
        }
        let environmentOverrides = OverridesParser.parseEnvironment(environment)
        overrides.merge(environmentOverrides.overrides) { _, fromEnvironment in fromEnvironment }
        for problem in environmentOverrides.problems { log(.warning, "override ignored: \(problem)") }
        return OverrideStore(fileAndEnvironment: overrides, api: api, log: log)
    }

    /// Whether any override is set (valid or not).
    var isActive: Bool { table.withLock { !$0.merged.isEmpty } }

    /// The overriding detail for `key`, or `nil` when it has none (or a bad one).
    func detail<Value>(for key: FlagKey<Value>) -> EvaluationDetail<Value>? {
        guard let raw = table.withLock({ $0.merged.isEmpty ? nil : $0.merged[key.name] }) else { return nil }
        let problem: String
        switch OverridesParser.value(raw.text, as: key.type) {
        case .success(let json):
            if let value = key.convert(json) {
                return EvaluationDetail(value: value, reason: .override)
            }
            problem = "does not convert to \(Value.self)"
        case .failure(let error):
            problem = error.message
        }
        let first = table.withLock { $0.reported.insert("\(key.name)=\(raw.text)").inserted }
        if first { log(.warning, "override of '\(key.name)' from \(raw.source) ignored: \(problem)") }
        return nil
    }

    /// Replaces the API overrides with those the app stored in the cache, for a read-only client; its own in-memory
    /// ones stay on top.
    func replaceStoredOverrides(_ api: [String: String]) {
        table.withLock { table in
            guard table.api != api else { return }
            table.api = api
            table.merge()
        }
    }

    /// Sets or clears (`nil`) an override in this process only, over what the app stored: a read-only client's
    /// `setOverride`.
    func setInMemoryOverride(_ key: String, text: String?) {
        table.withLock { table in
            table.inMemory[key] = .some(text)
            table.merge()
        }
    }

    /// Every override set (valid or not) by flag key, and the keys of those set through the API, read together.
    var all: (overrides: [String: RawOverride], api: Set<String>) {
        table.withLock { table in
            var api = Set(table.api.keys)
            // A read-only client's own overrides are set through the API too, and its clearings hide the app's.
            for (key, text) in table.inMemory {
                if text == nil { api.remove(key) } else { api.insert(key) }
            }
            return (table.merged, api)
        }
    }

    /// Sets or clears (`nil`) an API override's text.
    func setAPIOverride(_ key: String, text: String?) {
        table.withLock { table in
            table.api[key] = text
            table.merge()
        }
    }
}
