import Foundation

/// The readers of a document's items: flags and their overrides, rules, rollouts and splits; cohorts and their
/// conditions. Each records a `Problem` at its path and goes on, so that one bad item does not hide the others.
extension WireReader {
    mutating func flag(_ reader: inout JSONReader, key: String, _ path: @autoclosure () -> String) throws -> Flag? {
        guard try expect(&reader, .object, "a flag object", path()) else { return nil }
        var type: FlagType?
        var defaultValue: JSONValue?
        var flag = Flag(key: key, type: .bool, defaultValue: .null)
        let start = problems.count
        try reader.readObject { reader, field in
            switch field {
            case "type": type = try string(&reader, "\(path()).type").map(FlagType.init(name:))
            case "kind": flag.kind = try string(&reader, "\(path()).kind").map(FlagKind.init(name:)) ?? flag.kind
            case "values":
                if try reader.readNull() { break }
                flag.values = try strings(&reader, "\(path()).values")
            case "description": flag.description = try optionalString(&reader, "\(path()).description")
            case "owner": flag.owner = try optionalString(&reader, "\(path()).owner")
            case "default": defaultValue = try reader.readValue()
            case "killValue": flag.killValue = try reader.readValue()
            case "killed": flag.killed = try bool(&reader, "\(path()).killed") ?? false
            case "expiresAt": flag.expiresAt = try date(&reader, "\(path()).expiresAt")
            case "expiredValue": flag.expiredValue = try reader.readValue()
            case "archived": flag.archived = try bool(&reader, "\(path()).archived") ?? false
            case "salt": flag.salt = try optionalString(&reader, "\(path()).salt")
            case "overrides":
                try array(&reader, "\(path()).overrides") { wire, reader, index in
                    if let item = try wire.override(&reader, "\(path()).overrides[\(index)]") {
                        flag.overrides.append(item)
                    }
                }
            case "rules":
                try array(&reader, "\(path()).rules") { wire, reader, index in
                    if let rule = try wire.rule(&reader, "\(path()).rules[\(index)]") { flag.rules.append(rule) }
                }
            case "rollout":
                if try reader.readNull() { break }
                flag.rollout = try rollout(&reader, "\(path()).rollout")
            case "prerequisites": flag.prerequisites = try prerequisites(&reader, "\(path()).prerequisites")
            default: try reader.skipValue()
            }
        }
        liftPrerequisites(&flag, path())
        if type == nil { problem("\(path()).type", "missing; one of bool, int, double, string, json") }
        if defaultValue == nil { problem("\(path()).default", "missing; every flag needs a default value") }
        guard let type, let defaultValue, problems.count == start else { return nil }
        flag.type = type
        flag.defaultValue = defaultValue
        if type == .double { flag.normalizeNumbers() }
        return flag
    }

    mutating func override(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Override? {
        guard try expect(&reader, .object, "an override object", path()) else { return nil }
        var unit: String?
        var cohort: String?
        var value: JSONValue?
        var until: Date?
        try reader.readObject { reader, field in
            switch field {
            case "unit": unit = try string(&reader, "\(path()).unit")
            case "cohort": cohort = try string(&reader, "\(path()).cohort")
            case "value": value = try reader.readValue()
            case "until": until = try date(&reader, "\(path()).until")
            default: try reader.skipValue()
            }
        }
        guard let value else {
            problem("\(path()).value", "missing; an override forces a value")
            return nil
        }
        switch (unit, cohort) {
        case (let unit?, nil): return Override(target: .unit(unit), value: value, until: until)
        case (nil, let cohort?): return Override(target: .cohort(cohort), value: value, until: until)
        default:
            problem(path(), "an override names exactly one of 'unit' or 'cohort'")
            return nil
        }
    }

    mutating func rule(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Rule? {
        guard try expect(&reader, .object, "a rule object", path()) else { return nil }
        var name: String?
        var cohort: String?
        var conditions: [Condition]?
        var serves: [Rule.Serve] = []
        var unknownFields: [String] = []
        try reader.readObject { reader, field in
            switch field {
            case "name": name = try string(&reader, "\(path()).name")
            case "cohort": cohort = try string(&reader, "\(path()).cohort")
            case "conditions": conditions = try self.conditions(&reader, "\(path()).conditions")
            case "value": serves.append(.value(try reader.readValue()))
            case "rollout":
                if let rollout = try rollout(&reader, "\(path()).rollout") { serves.append(.rollout(rollout)) }
            case "split":
                if let split = try split(&reader, "\(path()).split") { serves.append(.split(split)) }
            case "description": _ = try optionalString(&reader, "\(path()).description")
            default:
                unknownFields.append(field)
                try reader.skipValue()
            }
        }
        let target: Rule.Target
        switch (cohort, conditions) {
        case (let cohort?, nil): target = .cohort(cohort)
        case (nil, let conditions?): target = .conditions(conditions)
        case (nil, nil):
            problem(path(), "a rule needs 'cohort' or 'conditions' (an empty list matches everyone)")
            return nil
        case (_?, _?):
            problem(path(), "a rule has either 'cohort' or 'conditions', not both")
            return nil
        }
        let serve: Rule.Serve
        switch serves.count {
        case 1: serve = serves[0]
        case 0 where !unknownFields.isEmpty: serve = .unknown(unknownFields)
        case 0:
            problem(path(), "a rule serves one of 'value', 'rollout' or 'split'")
            return nil
        default:
            problem(path(), "a rule serves only one of 'value', 'rollout' or 'split'")
            return nil
        }
        return Rule(name: name ?? "", target: target, serve: serve)
    }

    mutating func rollout(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Rollout? {
        guard try expect(&reader, .object, "a rollout object", path()) else { return nil }
        var value: JSONValue?
        var salt: String?
        var percent: Double?
        var schedule: [Rollout.Step]?
        var pausedAt: Date?
        let start = problems.count
        try reader.readObject { reader, field in
            switch field {
            case "value": value = try reader.readValue()
            case "salt": salt = try optionalString(&reader, "\(path()).salt")
            case "percent": percent = try double(&reader, "\(path()).percent")
            case "pausedAt": pausedAt = try date(&reader, "\(path()).pausedAt")
            case "schedule":
                var steps: [Rollout.Step] = []
                try array(&reader, "\(path()).schedule") { wire, reader, index in
                    if let step = try wire.step(&reader, "\(path()).schedule[\(index)]") { steps.append(step) }
                }
                schedule = steps
            default: try reader.skipValue()
            }
        }
        guard problems.count == start else { return nil }
        guard let value else {
            problem("\(path()).value", "missing; a rollout serves a value")
            return nil
        }
        switch (percent, schedule) {
        case (let percent?, nil): return Rollout(value: value, stage: .percent(percent), salt: salt, pausedAt: pausedAt)
        case (nil, let schedule?):
            return Rollout(value: value, stage: .schedule(schedule), salt: salt, pausedAt: pausedAt)
        default:
            problem(path(), "a rollout has exactly one of 'percent' or 'schedule'")
            return nil
        }
    }

    mutating func step(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Rollout.Step? {
        guard try expect(&reader, .object, "a step object", path()) else { return nil }
        var at: Date?
        var percent: Double?
        try reader.readObject { reader, field in
            switch field {
            case "at": at = try date(&reader, "\(path()).at")
            case "percent": percent = try double(&reader, "\(path()).percent")
            default: try reader.skipValue()
            }
        }
        guard let at, let percent else {
            problem(path(), "a step needs 'at' (a date-time) and 'percent'")
            return nil
        }
        return Rollout.Step(at: at, percent: percent)
    }

    mutating func split(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> [Variant]? {
        var variants: [Variant] = []
        var readable = true
        try array(&reader, path()) { wire, reader, index in
            guard try wire.expect(&reader, .object, "a variant object", "\(path())[\(index)]") else {
                readable = false
                return
            }
            var name: String?
            var value: JSONValue?
            var weight: Double?
            try reader.readObject { reader, field in
                switch field {
                case "name": name = try wire.optionalString(&reader, "\(path())[\(index)].name")
                case "value": value = try reader.readValue()
                case "weight": weight = try wire.double(&reader, "\(path())[\(index)].weight")
                default: try reader.skipValue()
                }
            }
            guard let value, let weight else {
                wire.problem("\(path())[\(index)]", "a variant needs 'value' and 'weight' (percent)")
                readable = false
                return
            }
            variants.append(Variant(name: name, value: value, weight: weight))
        }
        return readable ? variants : nil
    }

    mutating func cohort(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Cohort? {
        guard try expect(&reader, .object, "a cohort object", path()) else { return nil }
        var cohort = Cohort()
        try reader.readObject { reader, field in
            switch field {
            case "description": cohort.description = try optionalString(&reader, "\(path()).description")
            case "include": cohort.include = try strings(&reader, "\(path()).include")
            case "exclude": cohort.exclude = try strings(&reader, "\(path()).exclude")
            case "groups":
                try array(&reader, "\(path()).groups") { wire, reader, index in
                    if let group = try wire.conditions(&reader, "\(path()).groups[\(index)]") {
                        cohort.groups.append(group)
                    }
                }
            default: try reader.skipValue()
            }
        }
        return cohort
    }

    mutating func conditions(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> [Condition]? {
        var result: [Condition] = []
        let start = problems.count
        try array(&reader, path()) { wire, reader, index in
            if let condition = try wire.condition(&reader, "\(path())[\(index)]") { result.append(condition) }
        }
        return problems.count == start ? result : nil
    }

    mutating func condition(_ reader: inout JSONReader, _ path: @autoclosure () -> String) throws -> Condition? {
        guard try expect(&reader, .object, "a condition object", path()) else { return nil }
        var attribute: String?
        var op: Operator?
        var values: [String] = []
        try reader.readObject { reader, field in
            switch field {
            case "attribute": attribute = try string(&reader, "\(path()).attribute")
            case "op": op = try string(&reader, "\(path()).op").map(Operator.init(name:))
            case "values": values = try strings(&reader, "\(path()).values")
            default: try reader.skipValue()
            }
        }
        guard let attribute, let op else {
            problem(path(), "a condition needs 'attribute' and 'op'")
            return nil
        }
        return Condition(attribute: attribute, op: op, values: values)
    }
}
