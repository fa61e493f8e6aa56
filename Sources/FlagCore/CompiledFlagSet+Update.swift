import Foundation

extension CompiledFlagSet {
    /// This set as version `version`, with the flags and cohorts of a change replaced (a `nil` removes one).
    ///
    /// Only what the change touches is compiled: each changed flag and, when a cohort changed, the cohorts (they are
    /// checked together, since `in_cohort` links them) and every flag that names a cohort that changed, appeared,
    /// went, or became broken or whole again, and every flag requiring a changed flag (down a chain too) whose
    /// prerequisites' problems changed with it. Every other flag is shared with this set, unchanged. The result equals
    /// compiling the changed set from scratch (`CompiledFlagSetUpdateTests` compares the two after random writes).
    public func updating(
        flags changedFlags: [String: Flag?], cohorts changedCohorts: [String: Cohort?], version: Int, updatedAt: Date?
    ) -> CompiledFlagSet {
        var cohorts = self.cohorts
        var recompile = Set(changedFlags.keys)
        if !changedCohorts.isEmpty {
            var models = cohorts.models
            var unreadable = cohorts.unreadable
            for (name, cohort) in changedCohorts {
                models[name] = cohort
                unreadable[name] = nil
            }
            let next = CompiledCohorts(models: models, unreadable: unreadable, previous: cohorts)
            if cohorts.sharesIndexes(with: next) {
                var affected = Set(changedCohorts.keys)
                for name in Set(cohorts.slots.keys).union(next.slots.keys)
                where cohorts.whyBroken(name) != next.whyBroken(name) {
                    affected.insert(name)
                }
                for name in affected { recompile.formUnion(cohortUsers[name] ?? []) }
            } else {
                // Renumbered: every flag that names a cohort holds indexes of the old numbering.
                for users in cohortUsers.values { recompile.formUnion(users) }
            }
            cohorts = next
        }
        // The flags of the next version, as prerequisites see them.
        let lookup = { (key: String) -> PrerequisiteGraph.Found in
            if let change = changedFlags[key] { return change.map { .readable($0) } ?? .missing }
            guard let entry = self.flags[key] else { return .missing }
            return entry.flag.map { .readable($0) } ?? .unreadable
        }
        // A flag requiring a changed flag, directly or down a chain, may have gained or lost a problem: it compiles
        // again when it did.
        var pending = Array(changedFlags.keys)
        var reached: Set<String> = []
        while let key = pending.popLast() {
            for dependent in requiredBy[key] ?? [] where reached.insert(dependent).inserted {
                pending.append(dependent)
            }
        }
        var prerequisiteProblems: [String: [Problem]] = [:]
        for key in reached where changedFlags[key] == nil {
            guard let entry = self.flags[key], let flag = entry.flag else { continue }
            let problems = PrerequisiteGraph.problems(of: flag, lookup: lookup)
            if problems != entry.prerequisiteProblems {
                prerequisiteProblems[key] = problems
                recompile.insert(key)
            }
        }
        var flags = self.flags
        var users = cohortUsers
        var requiredBy = self.requiredBy
        var flagsWithProblems = self.flagsWithProblems
        for key in recompile {
            let old = flags[key]
            let flag: Flag?
            if let change = changedFlags[key] {
                flag = change
            } else if let readable = old?.flag {
                flag = readable
            } else {
                continue  // a flag the reader could not read depends on nothing
            }
            if let old {
                if !old.problems.isEmpty { flagsWithProblems -= 1 }
                for name in old.namedCohorts {
                    users[name]?.remove(key)
                    if users[name]?.isEmpty == true { users[name] = nil }
                }
                for required in old.requiredFlags {
                    requiredBy[required]?.remove(key)
                    if requiredBy[required]?.isEmpty == true { requiredBy[required] = nil }
                }
            }
            guard let flag else {
                flags[key] = nil
                continue
            }
            let entry = FlagEntry(
                flag, cohorts: cohorts,
                prerequisiteProblems: prerequisiteProblems[key]
                    ?? (changedFlags[key] == nil
                        ? old?.prerequisiteProblems ?? [] : PrerequisiteGraph.problems(of: flag, lookup: lookup)),
                sessionSlots: sessionSlots)
            flags[key] = entry
            if !entry.problems.isEmpty { flagsWithProblems += 1 }
            for name in entry.namedCohorts { users[name, default: []].insert(key) }
            for required in entry.requiredFlags { requiredBy[required, default: []].insert(key) }
        }
        return CompiledFlagSet(
            name: name, version: version, updatedAt: updatedAt, schema: schema, readProblems: readProblems,
            flags: flags, cohorts: cohorts, cohortUsers: users, requiredBy: requiredBy,
            flagsWithProblems: flagsWithProblems, sessionSlots: sessionSlots)
    }
}
