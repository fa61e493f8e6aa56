import FlagClient
import FlagCore

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
extension FlagDebugModel {
    /// Overrides flag `key` with `text`, read by the flag's type as an overrides file's value is (`bool`: `true` or
    /// `false`, also `1`/`0`, `yes`/`no`, `on`/`off`; `int`: a 64-bit integer; `double`: a finite number; `string`:
    /// the text, without one pair of surrounding quotes; `json`: a JSON value). Kept in the cache across restarts,
    /// like `client.setOverride`, and read by every session at once.
    ///
    /// Throws ``FlagDebugError`` when the menu is read-only, the flag is neither in the set nor declared, or the text
    /// is not a value of the flag: of its type, one of an enum flag's values, or a value the declared key reads (a
    /// case of its enum, a JSON value its `Decodable` type decodes).
    public func setOverride(_ key: String, text: String) throws(FlagDebugError) {
        try requireWritable(key)
        client.setOverride(named: key, to: try overrideValue(key, text: text))
        reload()
    }

    /// Clears the override of flag `key` set from the app (by this menu or `client.setOverride`); does nothing when
    /// the flag has none. Throws ``FlagDebugError`` when the menu is read-only, or when the override comes from the
    /// environment or an overrides file, which only a change there and a restart clear.
    public func clearOverride(_ key: String) throws(FlagDebugError) {
        try requireWritable(key)
        if let override = client.overridesSet[key] {
            guard override.isFromAPI else {
                throw FlagDebugError(
                    .notSetFromApp, key: key,
                    "the override of '\(key)' comes from \(override.source): remove it there and restart the app")
            }
            client.setOverride(named: key, to: nil)
        }
        reload()
    }

    /// Clears every override set from the app; those from the environment or an overrides file stay. Throws
    /// ``FlagDebugError`` when the menu is read-only.
    public func clearAllOverrides() throws(FlagDebugError) {
        try requireWritable(nil)
        for (key, override) in client.overridesSet where override.isFromAPI {
            client.setOverride(named: key, to: nil)
        }
        reload()
    }

    /// Opens the edit sheet for flag `key`, with its override's text, else its value.
    public func beginEditing(_ key: String) {
        let row = rows.first { $0.key == key }
        editText = row?.overrideText ?? row?.value ?? ""
        editError = nil
        editingKey = key
    }

    /// Sets the override from the edit sheet's text and closes the sheet; when the text is refused, keeps the sheet
    /// open with ``editError`` saying why.
    public func commitEdit() {
        guard let key = editingKey else { return }
        do {
            try setOverride(key, text: editText)
            editError = nil
            editingKey = nil
        } catch {
            editError = error.message
        }
    }

    /// Closes the edit sheet without changing anything.
    public func cancelEditing() {
        editError = nil
        editingKey = nil
    }

    /// Runs `action` (a clear button's), putting its error's message in ``actionError`` for the view to show.
    public func perform(_ action: (FlagDebugModel) throws -> Void) {
        do {
            try action(self)
        } catch let error as FlagDebugError {
            actionError = error.message
        } catch {
            actionError = "\(error)"
        }
    }

    private func requireWritable(_ key: String?) throws(FlagDebugError) {
        guard let readOnlyReason, isReadOnly else { return }
        throw FlagDebugError(.readOnly, key: key, readOnlyReason)
    }

    /// `text` read as a value of flag `key`: by the declared key's type (what the app reads) or else the set's.
    private func overrideValue(_ key: String, text: String) throws(FlagDebugError) -> JSONValue {
        let flag = setFlags[key] ?? nil
        let declared = keys[key]
        guard setFlags[key] != nil || declared != nil else {
            throw FlagDebugError(
                .unknownFlag, key: key,
                "no flag '\(key)' in set \(setName) nor among the keys the app declared: check the key's spelling")
        }
        guard let type = declared?.type ?? flag?.type else {
            throw FlagDebugError(
                .invalidValue, key: key,
                "flag '\(key)' cannot be read by this client, so it has no type to read the text as: declare its key "
                    + "in the app to override it")
        }
        let value: JSONValue
        switch FlagClient.overrideValue(text, as: type) {
        case .success(let parsed):
            value = parsed
        case .failure(let error):
            let article = type.name.first.map { "aeiou".contains($0) } == true ? "an" : "a"
            throw FlagDebugError(
                .invalidValue, key: key, "\(error.message) ('\(key)' is \(article) \(type.name) flag)")
        }
        if case .string(let string) = value, let values = flag?.values ?? declared?.cases, !values.contains(string) {
            throw FlagDebugError(
                .invalidValue, key: key,
                "'\(string)' is not one of the values of '\(key)': use one of \(values.joined(separator: ", "))")
        }
        if let declared, !declared.reads(value) {
            throw FlagDebugError(
                .invalidValue, key: key,
                "'\(text)' is not a value of \(declared.valueType), the type the app reads '\(key)' as")
        }
        return value
    }
}
