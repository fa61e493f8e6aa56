import FlagCore

extension FlagSession {
    /// What a frozen read found.
    @usableFromInline
    enum FrozenLookup: Sendable {
        /// The frozen value.
        case value(JSONValue)
        /// The frozen value of a `bool` flag, the commonest kind: returned without copying a `JSONValue` through its
        /// value witnesses and converted without calling the key's closure (~50 instructions of a ~200-instruction
        /// frozen read).
        case bool(Bool)
        /// The frozen evaluation failed: the caller's default.
        case fallback
        /// Not frozen yet, or a local override may apply: take the full path.
        case missing
    }

    /// One frozen flag: the value, what its detail is rebuilt from, and the decoded value of a `Decodable` key so
    /// that it decodes once. A value stored in the session's table, not an object: a first read allocated one per
    /// flag (~220 instructions, and fresh memory that no cache holds when 100,000 sessions each read once). On the
    /// common path only `value` and a long `variant` hold references; the entry used to hold a whole
    /// `EvaluationDetail`, whose strings every move of the entry retained and released.
    struct Frozen: Sendable {
        /// The served value, or the caller's default when `error` is set.
        var value: JSONValue
        var variant: String?
        /// A failure's message or a `Decodable` key's decoded value; `nil` on the common path.
        var annex: Annex?
        var version: Int?
        var reason: ReasonCode
        var error: ErrorCodeValue?
        /// Set by a kill: a later restore does not undo it in this session.
        var killed: Bool

        init(
            value: JSONValue, reason: ReasonCode, variant: String? = nil, error: ErrorCodeValue? = nil,
            message: String? = nil, version: Int?, killed: Bool = false
        ) {
            self.value = value
            self.reason = reason
            self.variant = variant
            self.error = error
            self.annex = message.map { Annex(message: $0) }
            self.version = version
            self.killed = killed
        }

        /// Sets every field to the evaluation that a source of `version` resolved; `typed` holds the value decoded
        /// for a `Decodable` key.
        mutating func set(
            _ resolution: Resolution, key: String, type: FlagType, default fallback: JSONValue, version: Int,
            typed: Annex?
        ) {
            let outcome = resolution.outcome
            let error = outcome.errorCode
            value = resolution.value(default: fallback)
            variant = resolution.variant
            annex = error == nil ? typed : resolution.message(key: key, type: type).map { Annex(message: $0) }
            self.version = version
            reason = outcome.reason
            self.error = error
            killed = false
        }

        /// The entry of a persisted detail; `nil` when its reason or error code is not one this build gives (the
        /// flag is then evaluated afresh, as for a persisted value that no longer parses).
        init?(detail: EvaluationDetail<JSONValue>, killed: Bool) {
            guard let reason = ReasonCode(detail.reason) else { return nil }
            var error: ErrorCodeValue?
            if let code = detail.errorCode {
                guard let known = ErrorCodeValue(code) else { return nil }
                error = known
            }
            self.init(
                value: detail.value, reason: reason, variant: detail.variant, error: error,
                message: detail.errorMessage, version: detail.version, killed: killed)
        }

        /// The public detail.
        var detail: EvaluationDetail<JSONValue> {
            EvaluationDetail(
                value: value, reason: reason.reason, variant: variant, errorCode: error?.errorCode,
                errorMessage: message, version: version)
        }

        var message: String? { annex?.message }

        /// What stands in an entry's place until its first value is written (`FrozenTable.insertIfAbsent`).
        static var placeholder: Frozen { Frozen(value: .null, reason: .default, version: nil) }

        var lookup: FrozenLookup {
            guard error == nil else { return .fallback }
            if case .bool(let bool) = value { return .bool(bool) }
            return .value(value)
        }
    }

    /// What few frozen entries carry: a failure's message, or the decoded value of a `Decodable` key. One optional
    /// reference instead of two fields keeps a `Frozen` at 64 bytes and the session's table with its lock at 124
    /// (see `FrozenTable`); and an optional reference copies with one retain, where an optional existential copied
    /// through its value witnesses cost a first read a few hundred instructions.
    final class Annex: Sendable {
        let message: String?
        let typed: (any Sendable)?

        init(message: String) {
            self.message = message
            typed = nil
        }

        init(typed: any Sendable) {
            message = nil
            self.typed = typed
        }
    }

    /// The frozen flags by name, keyed by the hash that the `FlagKey` computed once: a frozen read compares integers
    /// and then one name, never runs a hasher.
    ///
    /// The first flag a session freezes is stored in the table itself, which lives in the session's lock storage
    /// allocated with the session: most sessions read a handful of flags, and the first read of a fresh session
    /// then allocates nothing (the array of later entries cost ~680 instructions and cold memory). `first` is a
    /// placeholder while `count` is 0, not an optional: reading a field of an optional this size copied all of it.
    /// `count` is an `Int32` after `first`, in the padding at its end: the table is 104 bytes, and with the lock
    /// after it the session's lock storage is 124, two cache lines when aligned (148 bytes had been three or four;
    /// a first read over 100,000 sessions made earlier misses the cache on every line it touches).
    /// Later entries sit densely in insertion order and are scanned while there are few; past `linearLimit` an
    /// open-addressing index of entry positions joins them. Position 0 is `first`, position `p` is `rest[p - 1]`.
    struct FrozenTable: Sendable {
        struct Entry: Sendable {
            var hash: Int
            var name: String
            var frozen: Frozen
        }

        static let linearLimit = 8

        private var first = Entry(hash: 0, name: "", frozen: .placeholder)
        private var count: Int32 = 0
        private var rest: [Entry] = []
        /// Positions plus one (0 marks an empty slot); empty while the table is scanned linearly.
        private var index: [Int32] = []

        init(_ details: [String: EvaluationDetail<JSONValue>]) {
            for (name, detail) in details {
                self[name] = Frozen(detail: detail, killed: detail.reason == .disabled)
            }
        }

        /// The value frozen for `name`, whose `hashValue` is `hash`.
        @inline(__always)
        func find(_ name: String, hash: Int) -> FrozenLookup {
            guard let position = position(of: name, hash: hash) else { return .missing }
            return lookup(at: position)
        }

        /// The frozen entry of `name`, whose `hashValue` is `hash`.
        func frozen(_ name: String, hash: Int) -> Frozen? {
            position(of: name, hash: hash).map { frozen(at: $0) }
        }

        /// Freezes an entry that `fill` writes for `name` unless an entry is there already; returns the position
        /// of the entry that stays and whether it is the new one. `fill` gets a placeholder in the entry's place and
        /// must set every field: written field by field where it stays, the entry is never copied or destroyed
        /// whole (each of those walked all its fields: built outside and moved in, an entry was copied once and
        /// destroyed twice, ~200 instructions of a first read).
        mutating func insertIfAbsent(
            _ name: String, hash: Int, _ fill: (inout Frozen) -> Void
        ) -> (position: Int, inserted: Bool) {
            if let position = position(of: name, hash: hash) { return (position, false) }
            if count == 0 {
                first.hash = hash
                first.name = name
                fill(&first.frozen)
                count = 1
                return (0, true)
            }
            var entry = Entry(hash: hash, name: name, frozen: .placeholder)
            fill(&entry.frozen)
            return (append(entry), true)
        }

        /// What a read of the entry at `position` (from this table) finds.
        @inline(__always)
        func lookup(at position: Int) -> FrozenLookup {
            // Field by field: reading `lookup` of the entry copied the whole entry first (a retain and a release per
            // reference it holds).
            if position == 0 {
                guard first.frozen.error == nil else { return .fallback }
                if case .bool(let bool) = first.frozen.value { return .bool(bool) }
                return .value(first.frozen.value)
            }
            return rest[position - 1].frozen.lookup
        }

        /// The entry at `position` (from this table).
        func frozen(at position: Int) -> Frozen {
            position == 0 ? first.frozen : rest[position - 1].frozen
        }

        /// The frozen entry of `name`.
        subscript(name: String) -> Frozen? {
            get { frozen(name, hash: name.hashValue) }
            set {
                guard let newValue else { return }  // frozen values are replaced, never removed
                let hash = name.hashValue
                switch position(of: name, hash: hash) {
                case 0?: first.frozen = newValue
                case let position?: rest[position - 1].frozen = newValue
                case nil: _ = append(Entry(hash: hash, name: name, frozen: newValue))
                }
            }
        }

        /// The names frozen so far.
        var names: [String] { count == 0 ? [] : [first.name] + rest.map(\.name) }

        @inline(__always)
        private func position(of name: String, hash: Int) -> Int? {
            if index.isEmpty {
                guard count > 0 else { return nil }
                if first.hash == hash && first.name == name { return 0 }
                for position in rest.indices where rest[position].hash == hash && rest[position].name == name {
                    return position + 1
                }
                return nil
            }
            let mask = index.count - 1
            var slot = hash & mask
            while true {
                let stored = Int(index[slot])
                if stored == 0 { return nil }
                if hashAt(stored - 1) == hash && nameAt(stored - 1) == name { return stored - 1 }
                slot = (slot + 1) & mask
            }
        }

        private func hashAt(_ position: Int) -> Int {
            position == 0 ? first.hash : rest[position - 1].hash
        }

        private func nameAt(_ position: Int) -> String {
            position == 0 ? first.name : rest[position - 1].name
        }

        /// Appends `entry`; returns its position.
        private mutating func append(_ entry: Entry) -> Int {
            if count == 0 {
                first = entry
                count = 1
                return 0
            }
            if rest.isEmpty { rest.reserveCapacity(4) }
            rest.append(entry)
            count += 1
            let last = Int(count) - 1
            guard last >= Self.linearLimit else { return last }
            if Int(count) * 2 > index.count {
                reindex(capacity: max(32, index.count * 2))
            } else {
                place(last)
            }
            return last
        }

        private mutating func reindex(capacity: Int) {
            index = Array(repeating: 0, count: capacity)
            for position in 0..<Int(count) { place(position) }
        }

        private mutating func place(_ position: Int) {
            let mask = index.count - 1
            var slot = hashAt(position) & mask
            while index[slot] != 0 { slot = (slot + 1) & mask }
            index[slot] = Int32(position + 1)
        }
    }
}
