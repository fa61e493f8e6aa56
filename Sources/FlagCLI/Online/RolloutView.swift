import FlagCore
import Foundation

/// A flag-level rollout as people read it: the percent now, each step, a progress bar.
enum RolloutView {
    /// The percent in effect at `now` (SPEC §2.2): a fixed percent, or the last step at or before the time,
    /// frozen at `pausedAt` while paused.
    static func percent(_ rollout: JSONValue, now: Date) -> Double? {
        if let percent = rollout["percent"].double { return percent }
        guard let steps = rollout["schedule"].array else { return nil }
        let time = rollout["pausedAt"].date.map { min($0, now) } ?? now
        return steps.last { ($0["at"].date ?? .distantFuture) <= time }?["percent"].double ?? 0
    }

    /// `5% of true, step 3 of 7, paused since …`
    static func summary(_ rollout: JSONValue, now: Date) -> String {
        let percent = percent(rollout, now: now).map(Shown.percent) ?? "?"
        var text = "\(percent) of \(rollout["value"].compactText)"
        if let steps = rollout["schedule"].array {
            text += ", step \(currentStep(steps, rollout, now: now)) of \(steps.count)"
        }
        if rollout["pausedAt"] != .null { text += ", paused since \(Shown.when(rollout["pausedAt"], now: now))" }
        return text
    }

    /// The 1-based number of the step in effect (0 before the first).
    static func currentStep(_ steps: [JSONValue], _ rollout: JSONValue, now: Date) -> Int {
        let time = rollout["pausedAt"].date.map { min($0, now) } ?? now
        return steps.lastIndex { ($0["at"].date ?? .distantFuture) <= time }.map { $0 + 1 } ?? 0
    }

    /// `[#####...............]` for a percent, 20 characters wide.
    static func bar(_ percent: Double) -> String {
        let filled = Int((percent / 5).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled) + "]"
    }

    /// The lines of `rollout KEY show`.
    static func lines(_ key: String, _ rollout: JSONValue, now: Date) -> [String] {
        guard rollout != .null else { return ["\(key) has no rollout"] }
        let current = percent(rollout, now: now) ?? 0
        var lines = ["\(key): \(summary(rollout, now: now))", "\(bar(current)) \(Shown.percent(current))"]
        guard let steps = rollout["schedule"].array else { return lines }
        let step = currentStep(steps, rollout, now: now)
        var table = Table(header: ["", "STEP", "AT", "WHEN", "PERCENT"])
        for (index, entry) in steps.enumerated() {
            let at = entry["at"].date
            table.append([
                index + 1 == step ? ">" : "", String(index + 1), at.map(Shown.date) ?? "?",
                at.map { Shown.relative($0, now: now) } ?? "?", entry["percent"].double.map(Shown.percent) ?? "?",
            ])
        }
        lines.append("")
        lines += table.lines(fitting: Help.width)
        return lines
    }
}
