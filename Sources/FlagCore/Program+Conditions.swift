import Foundation

// Attribute conditions (SPEC §2.3) over the flat tables. String tests compare UTF-8 bytes, as clients in other
// languages do, without Unicode canonical equivalence.

extension Program {
    /// Whether a condition holds. A missing attribute makes every operator false except `not_exists`
    /// (and `in_cohort`, which looks at the unit, not at an attribute, in `cohorts`).
    func matches(
        _ condition: ConditionRecord, _ context: EvaluationContext, _ scratch: inout UnitScratch, cohorts: Program
    ) -> Bool {
        if condition.kind == .inCohort {
            var index = condition.operands.start
            while index < condition.operands.end {
                if cohorts.matches(cohort: cohortOperands[index], context, &scratch) { return true }
                index &+= 1
            }
            return false
        }
        // `unitID` is never looked up among the attributes, so its name key caches the unit id's version.
        if condition.isUnitID { return test(condition, context.unitID, &scratch) }
        return context.withAttribute(condition.attributeKey, name: names[condition.attribute]) { value in
            guard let value else { return condition.kind == .notExists }
            return test(condition, value, &scratch)
        }
    }

    /// Whether `value` passes the condition's test; `scratch` keeps the parsed version of the attribute.
    private func test(_ condition: ConditionRecord, _ value: String, _ scratch: inout UnitScratch) -> Bool {
        let operands = condition.operands
        switch condition.kind {
        case .equals:
            return withBytes(of: value) { anyString(operands, UnsafeRawBufferPointer($0), Self.isEqual) }
        case .equalsNone:
            return !withBytes(of: value) { anyString(operands, UnsafeRawBufferPointer($0), Self.isEqual) }
        case .contains:
            return withBytes(of: value) { anyString(operands, UnsafeRawBufferPointer($0), Self.contains) }
        case .startsWith:
            return withBytes(of: value) { anyString(operands, UnsafeRawBufferPointer($0), Self.hasPrefix) }
        case .endsWith:
            return withBytes(of: value) { anyString(operands, UnsafeRawBufferPointer($0), Self.hasSuffix) }
        case .matches:
            for index in Int(operands.start)..<Int(operands.end) where patterns[index].matches(value) { return true }
            return false
        case .number:
            guard let number = Double(value), number.isFinite else { return false }
            return anyNumber(operands, number, condition.comparison)
        case .semver:
            let plain = scratch.plainVersion(condition.attributeKey, value)
            return semver(operands, value, plain, condition.comparison)
        case .instant:
            guard let instant = ISO8601.parse(value)?.timeIntervalSince1970 else { return false }
            return anyNumber(operands, instant, condition.comparison)
        case .exists: return true
        case .notExists, .inCohort: return false
        }
    }

    /// Whether `test(value, operand)` holds for any string operand.
    @inline(__always)
    private func anyString(
        _ operands: Span, _ value: UnsafeRawBufferPointer,
        _ test: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Bool
    ) -> Bool {
        var index = operands.start
        while index < operands.end {
            let operand = stringOperands[index]
            let bytes = UnsafeRawBufferPointer(start: self.bytes.base + Int(operand.start), count: Int(operand.count))
            if test(value, bytes) { return true }
            index &+= 1
        }
        return false
    }

    @inline(__always)
    private func anyNumber(_ operands: Span, _ number: Double, _ comparison: Matcher.Comparison) -> Bool {
        var index = operands.start
        while index < operands.end {
            if comparison.holds(number, numberOperands[index]) { return true }
            index &+= 1
        }
        return false
    }

    private func semver(
        _ operands: Span, _ value: String, _ plain: PlainVersion?, _ comparison: Matcher.Comparison
    ) -> Bool {
        // Most app versions are plain MAJOR.MINOR.PATCH: compare those as numbers without building a
        // SemanticVersion; anything else (pre-releases, huge numbers) takes the general path.
        if let plain {
            var index = operands.start
            while index < operands.end {
                let operand = versionOperands[index]
                index &+= 1
                let order =
                    if let operandPlain = operand.plain {
                        plain.compare(to: operandPlain)
                    } else {
                        SemanticVersion.compare(plain.semanticVersion(value), fullVersions[operand.full])
                    }
                if comparison.holds(order) { return true }
            }
            return false
        }
        guard let version = SemanticVersion(value) else { return false }
        var index = operands.start
        while index < operands.end {
            if comparison.holds(SemanticVersion.compare(version, fullVersions[versionOperands[index].full])) {
                return true
            }
            index &+= 1
        }
        return false
    }

    // MARK: - Byte tests

    @inline(__always)
    static func isEqual(_ value: UnsafeRawBufferPointer, _ operand: UnsafeRawBufferPointer) -> Bool {
        value.count == operand.count
            && (value.isEmpty || memcmp(value.baseAddress!, operand.baseAddress!, value.count) == 0)
    }

    @inline(__always)
    static func hasPrefix(_ value: UnsafeRawBufferPointer, _ prefix: UnsafeRawBufferPointer) -> Bool {
        prefix.isEmpty
            || (prefix.count <= value.count && memcmp(value.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
    }

    @inline(__always)
    static func hasSuffix(_ value: UnsafeRawBufferPointer, _ suffix: UnsafeRawBufferPointer) -> Bool {
        suffix.isEmpty
            || (suffix.count <= value.count
                && memcmp(value.baseAddress! + (value.count - suffix.count), suffix.baseAddress!, suffix.count) == 0)
    }

    static func contains(_ value: UnsafeRawBufferPointer, _ needle: UnsafeRawBufferPointer) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= value.count else { return false }
        let first = needle[0]
        for start in 0...(value.count - needle.count) where value[start] == first {
            if memcmp(value.baseAddress! + start, needle.baseAddress!, needle.count) == 0 { return true }
        }
        return false
    }
}
