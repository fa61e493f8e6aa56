import Foundation

/// The Prometheus text of `/metrics`, written family by family: a family's `# HELP` and `# TYPE` lines, then its
/// samples, whose label values are escaped by construction.
struct MetricsText {
    /// A family's type.
    enum Kind: String {
        case counter, gauge, histogram
    }

    /// The text so far.
    private(set) var text = ""

    /// Starts family `name`: its help line and its type.
    mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(help)\n"
        text += "# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample without labels, `name value`.
    mutating func sample(_ name: String, _ value: some CustomStringConvertible) {
        sample(name, [:], value)
    }

    /// One sample, `name{label="value",…} value`.
    mutating func sample(
        _ name: String, _ labels: KeyValuePairs<String, String>, _ value: some CustomStringConvertible
    ) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.key)=\"\(Self.escape($0.value))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// The samples of histogram `name`: the cumulative count up to each bound in `bounds`, then up to `+Inf` (all
    /// `count` observations), the sum and the count. `buckets[i]` counts the observations between the bound before
    /// and `bounds[i]` alone; one over the last bound counts in `count` only.
    mutating func histogram(_ name: String, bounds: [Double], buckets: [Int], count: Int, sum: Double) {
        var cumulative = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += buckets[index]
            sample(name + "_bucket", ["le": "\(bound)"], cumulative)
        }
        sample(name + "_bucket", ["le": "+Inf"], count)
        sample(name + "_sum", sum)
        sample(name + "_count", count)
    }

    /// Escapes a label value (backslash, quote, line feed).
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
