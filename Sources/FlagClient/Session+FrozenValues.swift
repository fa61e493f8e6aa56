import FlagCore

extension FlagSession {
    /// What a frozen read found.
    @usableFromInline
    enum FrozenLookup: Sendable {
        /// The frozen value.
        case value(JSONValue)
        /// The frozen evaluation failed: the caller's default.
        case fallback
        /// Not frozen yet, or a local override may apply: take the full path.
        case missing
    }

    /// One frozen flag: its whole detail, and the decoded value of a `Decodable` key so that it decodes once.
    final class Frozen: Sendable {
        let detail: EvaluationDetail<JSONValue>
        let typed: TypedValue?
        /// Set by a kill: a later restore does not undo it in this session.
        let killed: Bool

        init(detail: EvaluationDetail<JSONValue>, typed: TypedValue? = nil, killed: Bool = false) {
            self.detail = detail
            self.typed = typed
            self.killed = killed
        }

        var lookup: FrozenLookup { detail.errorCode == nil ? .value(detail.value) : .fallback }
    }

    /// A decoded `Decodable` value, boxed: an optional reference copies with one retain, where an optional
    /// existential copied through its value witnesses cost a first read a few hundred instructions each time.
    final class TypedValue: Sendable {
        let value: any Sendable

        init(_ value: any Sendable) {
            self.value = value
        }
    }

    /// The frozen flags by name, keyed by the hash that the `FlagKey` computed once: a frozen read compares integers
    /// and then one name, never runs a hasher, and copies one small enum.
    ///
    /// Entries sit densely in insertion order and are scanned while there are few (most sessions read a handful of
    /// flags); past `linearLimit` an open-addressing index of entry positions joins them. A table of pre-filled
    /// slots cost a first read more than the evaluation: eight `Slot`s initialized, and destroyed with the session.
    struct FrozenTable: Sendable {
        struct Entry: Sendable {
            var hash: Int
            var name: String
            var value: FrozenLookup
            var frozen: Frozen
        }

        static let linearLimit = 8

        private var entries: [Entry] = []
        /// Positions in `entries` plus one (0 marks an empty slot); empty while the table is scanned linearly.
        private var index: [Int32] = []

        init(_ details: [String: EvaluationDetail<JSONValue>]) {
            for (name, detail) in details { self[name] = Frozen(detail: detail, killed: detail.reason == .disabled) }
        }

        /// The value frozen for `name`, whose `hashValue` is `hash`.
        @inline(__always)
        func find(_ name: String, hash: Int) -> FrozenLookup {
            guard let position = position(of: name, hash: hash) else { return .missing }
            return entries[position].value
        }

        /// The frozen entry of `name`, whose `hashValue` is `hash`.
        func frozen(_ name: String, hash: Int) -> Frozen? {
            position(of: name, hash: hash).map { entries[$0].frozen }
        }

        /// Freezes `frozen` for `name` unless an entry is there already; returns the entry that stays.
        mutating func insertIfAbsent(_ name: String, hash: Int, _ frozen: Frozen) -> Frozen {
            if let position = position(of: name, hash: hash) { return entries[position].frozen }
            append(Entry(hash: hash, name: name, value: frozen.lookup, frozen: frozen))
            return frozen
        }

        /// The frozen entry of `name`.
        subscript(name: String) -> Frozen? {
            get { position(of: name, hash: name.hashValue).map { entries[$0].frozen } }
            set {
                guard let newValue else { return }  // frozen values are replaced, never removed
                let hash = name.hashValue
                if let position = position(of: name, hash: hash) {
                    entries[position].value = newValue.lookup
                    entries[position].frozen = newValue
                } else {
                    append(Entry(hash: hash, name: name, value: newValue.lookup, frozen: newValue))
                }
            }
        }

        /// The names frozen so far.
        var names: [String] { entries.map(\.name) }

        @inline(__always)
        private func position(of name: String, hash: Int) -> Int? {
            if index.isEmpty {
                for position in entries.indices
                where entries[position].hash == hash && entries[position].name == name {
                    return position
                }
                return nil
            }
            let mask = index.count - 1
            var slot = hash & mask
            while true {
                let stored = Int(index[slot])
                if stored == 0 { return nil }
                if entries[stored - 1].hash == hash && entries[stored - 1].name == name { return stored - 1 }
                slot = (slot + 1) & mask
            }
        }

        private mutating func append(_ entry: Entry) {
            if entries.isEmpty { entries.reserveCapacity(4) }
            entries.append(entry)
            guard entries.count > Self.linearLimit else { return }
            if entries.count * 2 > index.count {
                reindex(capacity: max(32, index.count * 2))
            } else {
                place(entries.count - 1)
            }
        }

        private mutating func reindex(capacity: Int) {
            index = Array(repeating: 0, count: capacity)
            for position in entries.indices { place(position) }
        }

        private mutating func place(_ position: Int) {
            let mask = index.count - 1
            var slot = entries[position].hash & mask
            while index[slot] != 0 { slot = (slot + 1) & mask }
            index[slot] = Int32(position + 1)
        }
    }
}
