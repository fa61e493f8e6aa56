// libFuzzer harness for the telemetry report's reader, which takes bodies from anyone holding a (public) SDK key.
// Run with `Fuzz/run telemetry` (see Fuzz/README.md).
//
// Properties checked on every input; a violation traps so that libFuzzer saves the input as a crash:
// - no crash, no sanitizer report, whatever the bytes;
// - a refusal names a member, unless the body as a whole is wrong (not JSON, not an object, too large); a body
//   that is not JSON is refused, and a refusal of the whole as "not valid JSON" is one that JSONReader agrees with;
// - an accepted report keeps every limit (the known values of enum flags too), holds no control character (C0, DEL,
//   C1) in any string or name, and
//   equals a reference reading of the same bytes through JSONReader's tree (so no member is read into the wrong
//   place, and nothing is made up or lost); a report whose reference reading holds one is refused;
// - an accepted report's encoding reads back equal and is a fixed point, and holds only the documented members;
// - what small limits accept, the defaults accept too, as the same report.

import Foundation

@testable import FlagCore

/// Limits small enough for the fuzzer's inputs to cross every one of them.
private let small: TelemetryReport.Limits = {
    var limits = TelemetryReport.Limits()
    limits.maxBytes = 1_024
    limits.maxFlags = 3
    limits.maxVariants = 2
    limits.maxReasons = 2
    limits.maxOperators = 3
    limits.maxEnumFlags = 2
    limits.maxEnumValues = 3
    limits.maxEnumValueLength = 4
    limits.maxStringBytes = 12
    limits.maxCount = 1_000
    return limits
}()

/// The members `encoded()` may write: what docs/telemetry.md lists for privacy reviews.
private let documented: Set<String> = [
    "instance", "sdk", "app", "version", "appliedAt", "capabilities", "enums", "counts",
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let tree = Result { try JSONReader.parse(bytes) }
    let limited = Result { () throws(WireFormatError) in try TelemetryReport.decode(bytes, limits: small) }
    let decoded = Result { () throws(WireFormatError) in try TelemetryReport.decode(bytes) }
    checkRefusal(limited, tree: tree, bytes: bytes)
    checkRefusal(decoded, tree: tree, bytes: bytes)
    if case .success(let report) = limited {
        check(try decoded.get() == report, "small limits accept a report the defaults read otherwise")
        checkAccepted(report, limits: small, tree: tree)
    }
    if case .success(let report) = decoded {
        checkAccepted(report, limits: TelemetryReport.Limits(), tree: tree)
    }
    if case .success(let value) = tree, let read = reference(value), hasControlCharacter(read) {
        check(decoded.isFailure, "a report with a control character was accepted: \(read)")
    }
    return 0
}

/// Whether any string or name of `report` has a control character, which flagctl and the dashboard would show.
private func hasControlCharacter(_ report: TelemetryReport) -> Bool {
    var strings = [report.instance, report.sdk.name, report.sdk.version] + report.capabilities.operators
    if let app = report.app { strings += [app.name, app.version] }
    for (flag, variants) in report.counts {
        strings.append(flag)
        for (variant, reasons) in variants { strings += [variant] + reasons.keys }
    }
    for (flag, known) in report.enums {
        strings += [flag] + known.values + (known.defaultValue.map { [$0] } ?? [])
    }
    return strings.contains { $0.firstControlCharacter != nil }
}

/// A refusal names its member, or is about the whole body; bytes that are not JSON are always refused.
private func checkRefusal(
    _ result: Result<TelemetryReport, WireFormatError>, tree: Result<JSONValue, any Error>, bytes: [UInt8]
) {
    if case .failure = tree {
        check(result.isFailure, "a body that is not JSON was accepted: \(text(bytes))")
    }
    guard case .failure(let error) = result, error.field == nil else { return }
    let notJSON = error.message.hasPrefix("is not valid JSON: ")
    let tooLarge = error.message.hasPrefix("is ") && error.message.contains(" bytes, over the limit of ")
    // A member name of the report itself with a control character is refused at the report, as a name in `counts`
    // is refused at its object: the path would carry the character.
    let controlName = error.message.hasPrefix("has a name with the control character U+")
    let whole = notJSON || tooLarge || controlName || error.message.hasPrefix("must be a JSON object, found ")
    check(whole, "a refusal names no member: \(error)")
    if notJSON {
        check(tree.isFailure, "refused as not JSON, but JSONReader reads it: \(error)")
    }
}

/// An accepted report: within `limits`, equal to the reference reading, and surviving its own encoding.
private func checkAccepted(
    _ report: TelemetryReport, limits: TelemetryReport.Limits, tree: Result<JSONValue, any Error>
) {
    func fits(_ text: String) -> Bool { (1...limits.maxStringBytes).contains(text.utf8.count) }
    func fitsName(_ text: String) -> Bool { text.utf8.count <= limits.maxStringBytes }
    check(fits(report.instance), "instance outside the string limit")
    for software in [report.sdk] + (report.app.map { [$0] } ?? []) {
        check(fits(software.name) && fits(software.version), "a name or version outside the string limit")
    }
    check(report.version.map { $0 >= 1 } ?? true, "version below 1")
    check(report.capabilities.schema >= 1, "schema below 1")
    check(!hasControlCharacter(report), "an accepted report holds a control character")
    check(report.capabilities.operators.count <= limits.maxOperators, "too many operators")
    check(report.capabilities.operators.allSatisfy(fits), "an operator outside the string limit")
    check(report.counts.count <= limits.maxFlags, "too many flags")
    for (flag, variants) in report.counts {
        check(fitsName(flag) && variants.count <= limits.maxVariants, "flag '\(flag)' over a limit")
        for (variant, reasons) in variants {
            check(fitsName(variant) && reasons.count <= limits.maxReasons, "variant '\(variant)' over a limit")
            for (reason, count) in reasons {
                check(fitsName(reason) && (0...limits.maxCount).contains(count), "count '\(reason)' over a limit")
            }
        }
    }

    func fitsValue(_ text: String) -> Bool { (1...limits.maxEnumValueLength).contains(text.count) }
    check(report.enums.count <= limits.maxEnumFlags, "too many enum flags")
    for (flag, known) in report.enums {
        check(!flag.isEmpty && fitsName(flag), "enum flag '\(flag)' outside the name limit")
        check((1...limits.maxEnumValues).contains(known.values.count), "enum flag '\(flag)': values over a limit")
        check(known.values.allSatisfy(fitsValue), "enum flag '\(flag)': a value outside the length limit")
        check(Set(known.values).count == known.values.count, "enum flag '\(flag)': a value listed twice")
        check(known.defaultValue.map(fitsValue) ?? true, "enum flag '\(flag)': a default outside the length limit")
    }

    guard case .success(let value) = tree else { fail("a report was accepted from bytes JSONReader refuses") }
    check(reference(value) == report, "the report differs from a reading of JSONReader's tree: \(report)")

    let encoded = report.encoded()
    do {
        let again = try TelemetryReport.decode(encoded)
        check(again == report, "the encoding reads back as another report: \(text(encoded))")
        check(again.encoded() == encoded, "the encoding is not a fixed point: \(text(encoded))")
        guard case .object(let members) = try JSONReader.parse(encoded) else { fail("the encoding is not an object") }
        check(Set(members.keys).isSubset(of: documented), "the encoding writes undocumented members: \(members.keys)")
    } catch {
        fail("the encoding does not read back: \(error) in \(text(encoded))")
    }
}

/// The report as the bytes' JSON tree says, reading each member the simple way; nil when a member the decoder
/// accepted has another shape here.
private func reference(_ value: JSONValue) -> TelemetryReport? {
    guard case .object(let members) = value else { return nil }
    func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }
    func object(_ value: JSONValue?) -> [String: JSONValue]? {
        if case .object(let members)? = value { return members }
        return nil
    }
    func int(_ value: JSONValue?) -> Int? {
        if case .int(let int)? = value { return Int(exactly: int) }
        return nil
    }
    func software(_ value: JSONValue?) -> TelemetryReport.Software? {
        guard let members = object(value), let name = string(members["name"]),
            let version = string(members["version"])
        else { return nil }
        return TelemetryReport.Software(name: name, version: version)
    }
    guard let instance = string(members["instance"]), let sdk = software(members["sdk"]),
        let capabilities = object(members["capabilities"]), let schema = int(capabilities["schema"]),
        case .array(let operators)? = capabilities["operators"]
    else { return nil }
    let names = operators.compactMap { string($0) }
    guard names.count == operators.count else { return nil }
    var report = TelemetryReport(
        instance: instance, sdk: sdk, capabilities: ClientCapabilities(schema: schema, operators: Set(names)))
    if let app = members["app"] {
        guard let read = software(app) else { return nil }
        report.app = read
    }
    if let version = members["version"] {
        guard let read = int(version) else { return nil }
        report.version = read
    }
    if let appliedAt = members["appliedAt"] {
        guard let text = string(appliedAt), let date = ISO8601.parse(text) else { return nil }
        report.appliedAt = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }
    if let enums = members["enums"] {
        guard let flags = object(enums) else { return nil }
        for (flag, known) in flags {
            guard let known = object(known), case .array(let listed)? = known["values"] else { return nil }
            let values = listed.compactMap { string($0) }
            guard values.count == listed.count else { return nil }
            var read = TelemetryReport.KnownValues(values: values)
            if let defaultValue = known["default"] {
                guard let text = string(defaultValue) else { return nil }
                read.defaultValue = text
            }
            report.enums[flag] = read
        }
    }
    if let counts = members["counts"] {
        guard let flags = object(counts) else { return nil }
        for (flag, variants) in flags {
            guard let variants = object(variants) else { return nil }
            var read: [String: [String: Int]] = [:]
            for (variant, reasons) in variants {
                guard let reasons = object(reasons) else { return nil }
                var counts: [String: Int] = [:]
                for (reason, count) in reasons {
                    guard let count = int(count) else { return nil }
                    counts[reason] = count
                }
                read[variant] = counts
            }
            report.counts[flag] = read
        }
    }
    return report
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}
