import FlagCore

/// An aligned table for people: a header, rows, columns two spaces apart, fitted to a screen width.
///
/// When the natural width is too wide, the widest columns are narrowed (their cells cut with `…`) until the table
/// fits; no column is narrowed below its header or 8 characters.
///
/// A cell holds one line of text: its control characters, line breaks included, are escaped when it is added
/// (`escapingControlCharacters`), so that the widths measure what the terminal shows and a value cannot break a row.
///
/// ```
/// UNIT  VALUE  REASON           VARIANT
/// u-1   true   TARGETING_MATCH  beta-first
/// ```
package struct Table: Sendable {
    /// The column titles.
    package let header: [String]
    /// The rows, one cell per column.
    package private(set) var rows: [[String]] = []

    /// Creates an empty table with these columns.
    package init(header: [String]) {
        self.header = header.map { $0.escapingControlCharacters() }
    }

    /// Creates a table with these columns and the row that `row` makes of each of `items`, in their order.
    package init<Items: Sequence, Failure>(
        header: [String], rows items: Items, _ row: (Items.Element) throws(Failure) -> [String]
    ) throws(Failure) {
        self.init(header: header)
        for item in items { append(try row(item)) }
    }

    /// Adds a row; missing cells are empty, extra cells dropped.
    package mutating func append(_ row: [String]) {
        rows.append((0..<header.count).map { $0 < row.count ? row[$0].escapingControlCharacters() : "" })
    }

    /// The column widths after fitting into `width` characters.
    package func columnWidths(fitting width: Int = 100) -> [Int] {
        var widths = header.indices.map { column in
            rows.reduce(header[column].count) { max($0, $1[column].count) }
        }
        let floors = header.map { max($0.count, 8) }
        var total = widths.reduce(2 * max(header.count - 1, 0), +)
        // One character at a time from the widest column that may still shrink: two long columns end up sharing
        // the room instead of one losing everything.
        while total > width {
            let shrinkable = widths.indices.filter { widths[$0] > floors[$0] }
            guard let widest = shrinkable.max(by: { widths[$0] < widths[$1] }) else { break }
            widths[widest] -= 1
            total -= 1
        }
        return widths
    }

    /// The header line followed by one line per row, without trailing spaces.
    package func lines(fitting width: Int = 100) -> [String] {
        let widths = columnWidths(fitting: width)
        return ([header] + rows).map { line(for: $0, widths: widths) }
    }

    /// One row laid out in `widths` (the last column is not padded).
    func line(for row: [String], widths: [Int]) -> String {
        var text = ""
        for (column, cell) in row.enumerated() {
            let fitted = cell.count > widths[column] ? String(cell.prefix(widths[column] - 1)) + "…" : cell
            if column == row.count - 1 {
                text += fitted
            } else {
                text += pad(fitted, widths[column]) + "  "
            }
        }
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}

/// `text` padded with spaces to `width` characters.
func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// `1 problem`, `3 problems`.
func counted(_ count: Int, _ noun: String) -> String {
    count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
}

/// One compact JSON document built with FlagCore's writer: a line of `--json` output.
func jsonLine(_ build: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter()
    build(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

extension JSONValue {
    /// The value as compact JSON, as tables show it (`true`, `600`, `"blue"`, `{"columns":2}`).
    var compactText: String { String(decoding: canonicalBytes, as: UTF8.self) }
}
