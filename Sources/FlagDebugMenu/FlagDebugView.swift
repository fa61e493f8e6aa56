// The view only binds ``FlagDebugModel``: every decision (what a row says, what may be changed, why a text is refused)
// is the model's, which the Linux tests cover. This file was never compiled against SwiftUI here: `.ci/run` checks
// only that it parses (`swiftc -parse`).
#if canImport(SwiftUI)
    import FlagClient
    import SwiftUI
    #if canImport(UIKit)
        import UIKit
    #elseif canImport(AppKit)
        import AppKit
    #endif

    /// The debug menu: the client's state, every flag with its value and reason, search, an edit sheet for an
    /// override's text, clear buttons, refresh (a button and pull to refresh) and a button that copies the
    /// diagnostics. Show it in debug builds only.
    ///
    /// The app keeps the model in `@State`, so that it lives as long as the screen:
    ///
    /// ```swift
    /// #if DEBUG
    /// struct FlagsScreen: View {
    ///     @State private var model: FlagDebugModel
    ///
    ///     init(client: FlagClient) {
    ///         _model = State(initialValue: FlagDebugModel(client: client, keys: [AnyFlagKey(.newCheckout)]))
    ///     }
    ///
    ///     var body: some View { FlagDebugView(model: model) }
    /// }
    /// #endif
    /// ```
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    public struct FlagDebugView: View {
        @Bindable private var model: FlagDebugModel

        /// A view of `model`.
        public init(model: FlagDebugModel) {
            self.model = model
        }

        /// The menu in a navigation stack: the client's section, then the flags.
        public var body: some View {
            NavigationStack {
                List {
                    Section("Client") {
                        LabeledContent("State", value: model.stateText)
                        LabeledContent("Version", value: model.versionText)
                        LabeledContent("Last update", value: model.lastUpdateText)
                        LabeledContent("Server", value: model.server)
                        LabeledContent("Set", value: model.setName)
                        if let result = model.refreshResult {
                            Text(result).foregroundStyle(.secondary)
                        }
                        if let reason = model.readOnlyReason {
                            Text(reason).foregroundStyle(.secondary)
                        }
                    }
                    Section("Flags") {
                        ForEach(model.visibleRows) { row in
                            FlagDebugRow(row: row, model: model)
                        }
                    }
                }
                .searchable(text: $model.searchText, prompt: "Key or description")
                .navigationTitle("Flags")
                .refreshable { await model.refresh() }
                .toolbar {
                    ToolbarItem {
                        Button("Refresh now") { Task { await model.refresh() } }
                            .disabled(model.isRefreshing)
                    }
                    ToolbarItem {
                        Button("Copy diagnostics") { copyToPasteboard(model.diagnostics) }
                    }
                    ToolbarItem {
                        Button("Clear all overrides") { model.perform { try $0.clearAllOverrides() } }
                            .disabled(model.isReadOnly)
                    }
                }
                .sheet(isPresented: $model.isEditing) {
                    FlagDebugEditSheet(model: model)
                }
                .alert("Not changed", isPresented: $model.isShowingActionError) {
                    Button("OK") {}
                } message: {
                    Text(model.actionError ?? "")
                }
            }
        }
    }

    /// One flag: key and value, description, the facts line, any error or ignored override, and its buttons.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    struct FlagDebugRow: View {
        let row: FlagDebugModel.Row
        let model: FlagDebugModel

        var body: some View {
            VStack(alignment: .leading, spacing: 4) {
                HStack {
                    Text(row.key).font(.headline)
                    Spacer()
                    Text(row.value).monospaced().foregroundStyle(row.isOverridden ? .orange : .primary)
                }
                if let description = row.description {
                    Text(description).font(.subheadline)
                }
                Text(row.summary).font(.caption).foregroundStyle(.secondary)
                if let error = row.error {
                    Text(error).font(.caption).foregroundStyle(.red)
                }
                if let text = row.overrideText, let source = row.overrideSource {
                    Text("override \(text) from \(source)").font(.caption)
                }
                if let problem = row.overrideProblem {
                    Text("override ignored: \(problem)").font(.caption).foregroundStyle(.red)
                }
                HStack {
                    Button("Override…") { model.beginEditing(row.key) }
                        .disabled(model.isReadOnly)
                    if row.canClearOverride {
                        Button("Clear override") { model.perform { try $0.clearOverride(row.key) } }
                    }
                }
                .buttonStyle(.borderless)
            }
        }
    }

    /// The edit sheet: the override's text, the values an enum flag takes, and why a text was refused.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    struct FlagDebugEditSheet: View {
        @Bindable var model: FlagDebugModel

        var body: some View {
            NavigationStack {
                Form {
                    Section {
                        TextField("Value", text: $model.editText)
                            .autocorrectionDisabled()
                            .monospaced()
                    } footer: {
                        if let row = model.editingRow {
                            Text(row.summary)
                        }
                    }
                    if let values = model.editingRow?.values {
                        Section("Values") {
                            ForEach(values, id: \.self) { value in
                                Button(value) { model.editText = value }
                            }
                        }
                    }
                    if let error = model.editError {
                        Text(error).foregroundStyle(.red)
                    }
                }
                .navigationTitle(model.editingKey ?? "")
                .toolbar {
                    ToolbarItem(placement: .cancellationAction) {
                        Button("Cancel") { model.cancelEditing() }
                    }
                    ToolbarItem(placement: .confirmationAction) {
                        Button("Set") { model.commitEdit() }
                    }
                }
            }
        }
    }

    /// Puts `text` on the general pasteboard where the platform has one (not tvOS or watchOS).
    @MainActor
    private func copyToPasteboard(_ text: String) {
        #if canImport(UIKit) && !os(tvOS) && !os(watchOS)
            UIPasteboard.general.string = text
        #elseif canImport(AppKit)
            NSPasteboard.general.clearContents()
            NSPasteboard.general.setString(text, forType: .string)
        #endif
    }
#endif
