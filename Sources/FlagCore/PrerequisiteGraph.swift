/// The checks of a flag's prerequisites that need the rest of the set: the flag each names exists and is not
/// archived, the values listed are of its type, and following prerequisites from the flag never comes back to it
/// (a cycle) nor goes deeper than `Prerequisite.maxDepth`. What a prerequisite must be on its own (a valid key,
/// not the flag itself, at least one value) is the compiler's (`Compiler.checkPrerequisites`).
enum PrerequisiteGraph {
    /// A flag of the set, as a lookup finds it.
    enum Found {
        case missing
        /// The set has it, but the reader could not read it: it serves no value, so a prerequisite on it fails.
        case unreadable
        case readable(Flag)
    }

    /// The problems of `flag`'s prerequisites in a set whose flags `lookup` finds, with paths from the document's
    /// root; empty for a flag without prerequisites.
    static func problems(of flag: Flag, lookup: (String) -> Found) -> [Problem] {
        guard !flag.prerequisites.isEmpty else { return [] }
        let path = "flags.\(flag.key).prerequisites"
        var problems: [Problem] = []
        for (index, prerequisite) in flag.prerequisites.enumerated()
        where prerequisite.flag != flag.key && isValidKey(prerequisite.flag) {
            switch lookup(prerequisite.flag) {
            case .missing:
                problems.append(
                    Problem(path: "\(path)[\(index)].flag", message: "the set has no flag '\(prerequisite.flag)'"))
            case .unreadable:
                break
            case .readable(let required):
                if required.archived {
                    problems.append(
                        Problem(
                            path: "\(path)[\(index)].flag",
                            message: "'\(prerequisite.flag)' is archived and serves no value; "
                                + "remove the prerequisite or unarchive it"))
                }
                if case .unknown = required.type { continue }
                for (valueIndex, value) in prerequisite.values.enumerated() {
                    let text = String(decoding: value.canonicalBytes, as: UTF8.self)
                    let message: String
                    if !value.conforms(to: required.type) {
                        message =
                            "'\(prerequisite.flag)' is a \(required.type.name) flag; \(text) is not a "
                            + required.type.name
                    } else if let allowed = required.values, case .string(let string) = value,
                        !allowed.contains(string)
                    {
                        message =
                            "\(text) is not one of the values of '\(prerequisite.flag)' ("
                            + allowed.joined(separator: ", ") + ")"
                    } else {
                        continue
                    }
                    problems.append(Problem(path: "\(path)[\(index)].values[\(valueIndex)]", message: message))
                }
            }
        }
        if let problem = chainProblem(from: flag, lookup: lookup) { problems.append(problem) }
        return problems
    }

    /// A cycle through `flag` (`a → b → a`), or a chain from it deeper than `Prerequisite.maxDepth`.
    private static func chainProblem(from flag: Flag, lookup: (String) -> Found) -> Problem? {
        let path = "flags.\(flag.key).prerequisites"
        // The least depth each flag was followed from: reached again no less deep, it has nothing new to show.
        var followedAt: [String: Int] = [:]
        func walk(_ current: Flag, _ chain: [String]) -> Problem? {
            for prerequisite in current.prerequisites {
                let next = prerequisite.flag
                if next == flag.key, chain.count > 1 || current.key != flag.key {
                    return Problem(
                        path: path, message: "prerequisite cycle: \((chain + [next]).joined(separator: " → "))")
                }
                if chain.contains(next) { continue }  // a cycle that does not pass through this flag: its own
                if chain.count > Prerequisite.maxDepth {
                    return Problem(
                        path: path,
                        message: "a chain of prerequisites deeper than \(Prerequisite.maxDepth): "
                            + (chain + [next]).joined(separator: " → "))
                }
                if let depth = followedAt[next], depth <= chain.count { continue }
                followedAt[next] = chain.count
                guard case .readable(let required) = lookup(next) else { continue }
                if let problem = walk(required, chain + [next]) { return problem }
            }
            return nil
        }
        return walk(flag, [flag.key])
    }
}
