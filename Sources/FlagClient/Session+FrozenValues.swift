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
        let typed: (any Sendable)?
        /// Set by a kill: a later restore does not undo it in this session.
        let killed: Bool

        init(detail: EvaluationDetail<JSONValue>, typed: (any Sendable)? = nil, killed: Bool = false) {
            self.detail = detail
            self.typed = typed
            self.killed = killed
        }

        var lookup: FrozenLookup { detail.errorCode == nil ? .value(detail.value) : .fallback }
    }

    /// The frozen flags by name, in one open-addressing array probed with the hash that the `FlagKey` computed
    /// once: a frozen read compares integers and then one name, never runs a hasher, and copies one small enum.
    struct FrozenTable: Sendable {
        struct Slot: Sendable {
            /// 0 marks an empty slot; real hashes of 0 are stored as 1.
            var hash = 0
            var name = ""
            var value = FrozenLookup.missing
            var frozen: Frozen?
        }

        private var slots: [Slot] = []
        private var count = 0

        init(_ details: [String: EvaluationDetail<JSONValue>]) {
            for (name, detail) in details { self[name] = Frozen(detail: detail, killed: detail.reason == .disabled) }
        }

        static func normalized(_ hash: Int) -> Int { hash == 0 ? 1 : hash }

        /// The value frozen for `name`, whose `hashValue` is `hash`.
        @inline(__always)
        func find(_ name: String, hash: Int) -> FrozenLookup {
            guard let index = index(of: name, hash: Self.normalized(hash)) else { return .missing }
            return slots[index].value
        }

        /// The frozen entry of `name`, whose `hashValue` is `hash`.
        func frozen(_ name: String, hash: Int) -> Frozen? {
            index(of: name, hash: Self.normalized(hash)).flatMap { slots[$0].frozen }
        }

        /// Freezes `frozen` for `name` unless an entry is there already; returns the entry that stays.
        mutating func insertIfAbsent(_ name: String, hash: Int, _ frozen: Frozen) -> Frozen {
            let hash = Self.normalized(hash)
            if let index = index(of: name, hash: hash), let existing = slots[index].frozen { return existing }
            set(name, hash: hash, frozen)
            return frozen
        }

        /// The frozen entry of `name`.
        subscript(name: String) -> Frozen? {
            get { index(of: name, hash: Self.normalized(name.hashValue)).flatMap { slots[$0].frozen } }
            set {
                guard let newValue else { return }  // frozen values are replaced, never removed
                set(name, hash: Self.normalized(name.hashValue), newValue)
            }
        }

        /// The names frozen so far.
        var names: [String] { slots.filter { $0.hash != 0 }.map(\.name) }

        @inline(__always)
        private func index(of name: String, hash: Int) -> Int? {
            guard !slots.isEmpty else { return nil }
            let mask = slots.count - 1
            var index = hash & mask
            while true {
                let stored = slots[index].hash
                if stored == 0 { return nil }
                if stored == hash && slots[index].name == name { return index }
                index = (index + 1) & mask
            }
        }

        private mutating func set(_ name: String, hash: Int, _ frozen: Frozen) {
            if (count + 1) * 2 > slots.count { grow() }
            let mask = slots.count - 1
            var index = hash & mask
            while slots[index].hash != 0 && !(slots[index].hash == hash && slots[index].name == name) {
                index = (index + 1) & mask
            }
            if slots[index].hash == 0 { count += 1 }
            slots[index] = Slot(hash: hash, name: name, value: frozen.lookup, frozen: frozen)
        }

        private mutating func grow() {
            let old = slots
            slots = Array(repeating: Slot(), count: max(4, slots.count * 2))
            count = 0
            for slot in old where slot.hash != 0 {
                if let frozen = slot.frozen { set(slot.name, hash: slot.hash, frozen) }
            }
        }
    }
}
