import FlagCore
import Foundation

/// Whether the client reports what it did with the flags (docs/telemetry.md), and how often.
///
/// ```swift
/// configuration.telemetry = .off                   // nothing is counted or sent
/// configuration.telemetry = .every(seconds: 300)   // the background period; the default is 60 s
/// ```
///
/// A report carries the instance id the server issued, the SDK's and the app's name and version, the set version
/// in use and when it was applied, the operators this build evaluates, the cases of the enum keys read, and
/// evaluation counts per flag × variant × reason. Never a unit id, an attribute or a served value.
public enum TelemetryMode: Sendable, Hashable {
    /// Nothing is counted and no report is sent. The client still sends back the instance id the server gives it,
    /// so the server counts its connection as one that does not report.
    case off
    /// A report every `seconds` in the background (at least 1 s; the server accepts one every 5 s from an
    /// instance after a burst of five), and one soon after each new set version is applied.
    case every(seconds: Double)

    /// The period in seconds; `nil` when telemetry is off.
    var period: Double? {
        switch self {
        case .off: nil
        case .every(let seconds): max(1, seconds.isFinite ? seconds : 60)
        }
    }
}

extension FlagClient {
    /// This SDK's name and version, as reports carry them.
    public static let sdk = TelemetryReport.Software(name: "FlagClient", version: "2.0.0")

    /// The app's name and version from an Info.plist dictionary (`CFBundleName`, `CFBundleShortVersionString`);
    /// `nil` unless both are there and short enough to report.
    static func app(infoDictionary: [String: Any]?) -> TelemetryReport.Software? {
        guard let name = infoDictionary?["CFBundleName"] as? String,
            let version = infoDictionary?["CFBundleShortVersionString"] as? String
        else { return nil }
        return TelemetryReport.Software(name: name, version: version).reportable
    }
}

extension TelemetryReport.Software {
    /// Itself as the server would take it, else `nil`: control characters, which the server refuses, escaped as
    /// flagctl shows them (`\e`, `\u0007`), then a name and a version of 1 to 256 bytes each. A report with an app
    /// the server refuses would be refused whole, and its counts lost.
    var reportable: TelemetryReport.Software? {
        let escaped = TelemetryReport.Software(
            name: name.escapingControlCharacters(), version: version.escapingControlCharacters())
        let bound = TelemetryReport.Limits().maxStringBytes
        guard (1...bound).contains(escaped.name.utf8.count), (1...bound).contains(escaped.version.utf8.count) else {
            return nil
        }
        return escaped
    }
}

extension TelemetryReport.KnownValues {
    /// The known values of the enum key `key` as a report may carry them (`TelemetryReport.Limits`): `nil` when the
    /// key or a value is one the server would refuse. Nothing is escaped or cut: a value that differs from the raw
    /// value the app compares would misinform the gate, so such an enum is left out (as if it were not an enum).
    func reportable(as key: String, limits: TelemetryReport.Limits = .init()) -> Self? {
        func fits(_ value: String) -> Bool {
            !value.isEmpty && value.count <= limits.maxEnumValueLength && value.firstControlCharacter == nil
        }
        guard !key.isEmpty, key.utf8.count <= limits.maxStringBytes, key.firstControlCharacter == nil,
            !values.isEmpty, values.count <= limits.maxEnumValues, values.allSatisfy(fits)
        else { return nil }
        return Self(values: values, defaultValue: defaultValue.flatMap { fits($0) ? $0 : nil })
    }

    /// `enums` as a report carries them, and the keys left out: those `reportable` refuses, and past
    /// `limits.maxEnumFlags` or `maxBytes` of JSON, in key order. The bytes keep most of a report's room for its
    /// counts.
    static func reportable(
        _ enums: [String: Self], limits: TelemetryReport.Limits = .init(), maxBytes: Int
    ) -> (enums: [String: Self], leftOut: [String]) {
        var kept: [String: Self] = [:]
        var leftOut: [String] = []
        var bytes = 0
        for key in enums.keys.sorted(by: utf8Less) {
            guard let known = enums[key]?.reportable(as: key, limits: limits), kept.count < limits.maxEnumFlags else {
                leftOut.append(key)
                continue
            }
            var writer = JSONWriter()
            writer.key(key)
            known.write(to: &writer)
            guard bytes + writer.bytes.count <= maxBytes else {
                leftOut.append(key)
                continue
            }
            bytes += writer.bytes.count
            kept[key] = known
        }
        return (kept, leftOut)
    }
}

extension TransportHead {
    /// The instance id the server issued with this answer (`Flagstaff-Instance`, on a stream's 200 and a poll's 200
    /// or 304); `nil` when there is none or it is not 1 to 256 visible ASCII characters. It goes back to the server
    /// as a request header, so a value that could break a header (a line break) is never taken.
    var issuedInstance: String? {
        guard status == 200 || status == 304, let id = self["flagstaff-instance"] else { return nil }
        let bytes = id.utf8
        guard (1...TelemetryReport.Limits().maxStringBytes).contains(bytes.count),
            bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return nil }
        return id
    }
}
