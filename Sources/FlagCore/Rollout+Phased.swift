import Foundation

/// Phased rollouts (SPEC §2.2): schedules, presets, pause and resume. Time always comes from the caller.
extension Rollout {
    /// Apple's 7-day phased release: 1, 2, 5, 10, 20, 50, 100 % on days 0–6 after the start.
    public static let applePercents: [Double] = [1, 2, 5, 10, 20, 50, 100]

    /// A schedule from a named preset; `nil` for a name this build does not know. Presets: `apple`.
    public static func preset(_ name: String, start: Date, value: JSONValue, salt: String? = nil) -> Rollout? {
        switch name {
        case "apple":
            let steps = applePercents.enumerated().map { day, percent in
                Step(at: start.addingTimeInterval(Double(day) * 86_400), percent: percent)
            }
            return Rollout(value: value, stage: .schedule(steps), salt: salt)
        default:
            return nil
        }
    }

    /// The percent in effect at `date`: a fixed percent, or the last step at or before the date (0 before the
    /// first step). A paused schedule stays at its percent at `pausedAt`, whatever the date.
    public func percent(at date: Date) -> Double {
        switch stage {
        case .percent(let percent):
            return percent
        case .schedule(let steps):
            let time = pausedAt.map { min($0, date) } ?? date
            return steps.last { $0.at <= time }?.percent ?? 0
        }
    }

    /// The same rollout paused at `date`. Pausing a paused rollout keeps the first pause.
    public func paused(at date: Date) -> Rollout {
        var copy = self
        if copy.pausedAt == nil { copy.pausedAt = date }
        return copy
    }

    /// The same rollout resumed at `date`: every step later than `pausedAt` moves later by the time spent paused,
    /// so the remaining phases keep their lengths. Resuming a running rollout changes nothing.
    public func resumed(at date: Date) -> Rollout {
        guard let pausedAt else { return self }
        var copy = self
        copy.pausedAt = nil
        if case .schedule(let steps) = stage {
            let pause = max(0, date.timeIntervalSince(pausedAt))
            copy.stage = .schedule(
                steps.map { $0.at > pausedAt ? Step(at: $0.at.addingTimeInterval(pause), percent: $0.percent) : $0 })
        }
        return copy
    }
}
