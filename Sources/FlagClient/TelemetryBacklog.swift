import FlagCore

/// The counts not yet accepted by the server: what the counter gave since the last accepted report, merged across
/// failed attempts, and bounded so that a client cut off from the server for days keeps a fixed amount of memory.
///
/// Beyond a bound a count is dropped, and the evaluations dropped are counted (`dropped`) so that the reporter can
/// log them. The bounds are the report's own (`TelemetryReport.Limits`: 2,000 flags, 64 variants per flag, 16
/// reasons per variant, names of at most 256 bytes, no empty flag key, a count up to 10¹²), so that what is kept is
/// always a report
/// the server takes, and at most `maxCells` flag × variant × reason cells in all, which keeps the memory at a few
/// megabytes. I/O-free: the reporter owns one and tests drive it directly.
///
/// The server refuses control characters in a report, but a variant is a rule's name, which an editor may have
/// written with one, and a flag key is the app's own: such a name is kept with its control characters escaped as
/// flagctl shows them (`beta\e`), so that the flag's evaluations still count (`stale` reads a flag nobody
/// evaluates as unused) and the report is not refused whole.
struct TelemetryBacklog: Sendable, Equatable {
    /// How much is kept.
    struct Bounds: Sendable, Equatable {
        var maxFlags: Int
        var maxVariants: Int
        var maxReasons: Int
        var maxCells: Int
        var maxNameBytes: Int
        var maxCount: Int

        /// The report's limits, and 20,000 cells in all.
        static let standard: Bounds = {
            let limits = TelemetryReport.Limits()
            return Bounds(
                maxFlags: limits.maxFlags, maxVariants: limits.maxVariants, maxReasons: limits.maxReasons,
                maxCells: 20_000, maxNameBytes: limits.maxStringBytes, maxCount: limits.maxCount)
        }()
    }

    let bounds: Bounds
    /// The counts kept.
    private(set) var counts: TelemetryReport.Counts = [:]
    /// How many flag × variant × reason cells `counts` holds.
    private(set) var cells = 0
    /// Evaluations dropped at a bound since the last `resetDropped()`.
    private(set) var dropped = 0

    init(bounds: Bounds = .standard) {
        self.bounds = bounds
    }

    var isEmpty: Bool { counts.isEmpty }

    /// Adds `newer` to the counts kept; what a bound leaves out is added to `dropped`.
    mutating func merge(_ newer: TelemetryReport.Counts) {
        for (flag, variants) in newer {
            for (variant, reasons) in variants {
                for (reason, count) in reasons where count > 0 {
                    add(
                        count, flag: flag.escapingControlCharacters(), variant: variant.escapingControlCharacters(),
                        reason: reason.escapingControlCharacters())
                }
            }
        }
    }

    private mutating func add(_ count: Int, flag: String, variant: String, reason: String) {
        if let kept = counts[flag]?[variant]?[reason] {
            // A count saturates at the bound rather than being refused whole by the server.
            counts[flag]?[variant]?[reason] = kept + min(count, bounds.maxCount - kept)
            return
        }
        // The server refuses an empty flag key (a `FlagKey("")` is possible); the variant `""` means "none".
        let fits =
            cells < bounds.maxCells && !flag.isEmpty
            && [flag, variant, reason].allSatisfy { $0.utf8.count <= bounds.maxNameBytes }
            && (counts[flag] != nil || counts.count < bounds.maxFlags)
            && (counts[flag]?[variant] != nil || (counts[flag]?.count ?? 0) < bounds.maxVariants)
            && (counts[flag]?[variant]?.count ?? 0) < bounds.maxReasons
        guard fits else {
            dropped += count
            return
        }
        counts[flag, default: [:]][variant, default: [:]][reason] = min(count, bounds.maxCount)
        cells += 1
    }

    /// Forgets the flags `sent` (a report the server accepted, or refused for good).
    mutating func remove(_ sent: Set<String>) {
        for flag in sent {
            guard let variants = counts.removeValue(forKey: flag) else { continue }
            cells -= variants.values.reduce(0) { $0 + $1.count }
        }
    }

    /// Starts counting dropped evaluations afresh (after they were logged).
    mutating func resetDropped() {
        dropped = 0
    }

    /// The body of the next report: `report` with as many whole flags of the backlog as fit in `maxBytes` (every
    /// flag, unless the backlog is larger than one report may be), and the flags it carries.
    func body(for report: TelemetryReport, maxBytes: Int) -> (bytes: [UInt8], flags: Set<String>) {
        var report = report
        report.counts = counts
        let whole = report.encoded()
        if whole.count <= maxBytes { return (whole, Set(counts.keys)) }
        // Rare: the longest prefix of the flags (in name order) that fits, found by bisection; the rest waits for
        // the next report.
        let names = counts.keys.sorted()
        func encoded(_ prefix: Int) -> [UInt8] {
            report.counts = [:]
            for name in names[..<prefix] { report.counts[name] = counts[name] }
            return report.encoded()
        }
        var fitting = 0
        var tooMany = names.count
        while tooMany - fitting > 1 {
            let middle = (fitting + tooMany) / 2
            if encoded(middle).count <= maxBytes { fitting = middle } else { tooMany = middle }
        }
        return (encoded(fitting), Set(names[..<fitting]))
    }
}
