/// The text people write into flags and cohorts, checked for control characters when it is written.
///
/// The server runs these on the items a request writes, not in the validation of the whole set: a set stored with
/// such a character before they were refused keeps being served, and its other items stay writable.
extension Flag {
    /// A problem for each member with a control character, at its path inside the flag (`description`,
    /// `rules[0].name`, `rules[1].split[0].name`, `values[2]`, `owner`): the description may hold line breaks and
    /// tabs; the owner, the values of an enum flag, rule names and variant names (both reported as the variant an
    /// evaluation served) are one line.
    public var writtenTextProblems: [Problem] {
        var problems: [Problem] = []
        func check(_ text: String?, _ path: @autoclosure () -> String, multiline: Bool = false) {
            guard let refusal = text?.controlCharacterRefusal(multiline: multiline) else { return }
            problems.append(Problem(path: path(), message: refusal))
        }
        check(description, "description", multiline: true)
        check(owner, "owner")
        for (index, value) in (values ?? []).enumerated() { check(value, "values[\(index)]") }
        for (index, rule) in rules.enumerated() {
            check(rule.name, "rules[\(index)].name")
            guard case .split(let variants) = rule.serve else { continue }
            for (arm, variant) in variants.enumerated() { check(variant.name, "rules[\(index)].split[\(arm)].name") }
        }
        return problems
    }
}

extension Cohort {
    /// A problem for a description with a control character other than a line break or a tab, at `description`.
    public var writtenTextProblems: [Problem] {
        guard let refusal = description?.controlCharacterRefusal(multiline: true) else { return [] }
        return [Problem(path: "description", message: refusal)]
    }
}
