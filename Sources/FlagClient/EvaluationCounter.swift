import FlagCore
import FlagLock

/// Counts the evaluations sessions make, per flag × variant × reason, until the telemetry reporter takes them, and
/// keeps what the enum keys read know of their cases.
///
/// Sessions count on the reading thread, so the count is a short critical section: the table is an array indexed
/// by the flag's slot (`FlagSlots`), each flag holding its key and a few cells searched in order, and nothing is
/// allocated once a flag's cell exists. The reporter swaps the counts out under the lock and builds its report outside it,
/// so a read never waits for a report.
final class EvaluationCounter: Sendable {
    /// One flag's counts since the last `take`.
    private struct FlagCounts {
        var key = ""
        var cells: [Cell] = []

        /// Counts one evaluation of the flag `key` with `variant` and `reason`.
        mutating func add(key: String, variant: String?, reason: ReasonCode) {
            if cells.isEmpty { self.key = key }
            // A flag is read with a few variants and reasons; a variant's name is compared only when the reason
            // matches. Reasons compare by raw value: `==` on FlagCore's enum is a generic call from this module.
            for index in cells.indices
            where cells[index].reason.rawValue == reason.rawValue && cells[index].variant == variant {
                cells[index].count += 1
                return
            }
            cells.append(Cell(variant: variant, reason: reason, count: 1))
        }
    }

    /// The count of one variant and reason of a flag.
    private struct Cell {
        let variant: String?
        let reason: ReasonCode
        var count: Int
    }

    /// The counts, and the cases of the enum keys read, both by slot. One lock: an enum key's first read records its
    /// cases in the same step that counts it.
    private struct Table {
        var flags: [FlagCounts] = []
        /// Kept across `take`: every report says what the app knows.
        var declared: [(key: String, cases: EnumCases)?] = []
    }

    private let table = Locked(Table())

    /// Counts one evaluation of the flag `key`, whose slot is `slot`; `cases` are those of the enum key that read
    /// it, kept from the first read of that flag that gives them.
    func count(_ key: String, slot: Int, variant: String?, reason: ReasonCode, declaring cases: EnumCases? = nil) {
        table.withLock { table in
            if slot >= table.flags.count {
                table.flags.reserveCapacity(Swift.max(slot + 1, 2 * table.flags.capacity))
                while slot >= table.flags.count { table.flags.append(FlagCounts()) }
            }
            table.flags[slot].add(key: key, variant: variant, reason: reason)
            if let cases, slot >= table.declared.count || table.declared[slot] == nil, cases.known != nil {
                while slot >= table.declared.count { table.declared.append(nil) }
                table.declared[slot] = (key, cases)
            }
        }
    }

    /// What the enum keys the sessions have read know, by flag key: every report carries it.
    var knownValues: [String: TelemetryReport.KnownValues] {
        let declared = table.withLock { $0.declared }
        var values: [String: TelemetryReport.KnownValues] = [:]
        for case (let key, let cases)? in declared { values[key] = cases.known }
        return values
    }

    /// The counts since the last call, in the report's shape (`""` for no variant, reasons by wire name); starts
    /// counting afresh.
    func take() -> TelemetryReport.Counts {
        let taken = table.withLock { table in
            var taken: [FlagCounts] = []
            swap(&taken, &table.flags)
            return taken
        }
        var counts: TelemetryReport.Counts = [:]
        for flag in taken where !flag.cells.isEmpty {
            var variants: [String: [String: Int]] = [:]
            for cell in flag.cells {
                variants[cell.variant ?? "", default: [:]][cell.reason.reason.rawValue, default: 0] += cell.count
            }
            counts[flag.key] = variants  // one slot per name: no key is met twice
        }
        return counts
    }
}
