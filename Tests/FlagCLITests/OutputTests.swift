import FlagCLI
import Testing

/// Tables for people.
@Suite("Table")
struct OutputTests {
    @Test("columns align two spaces apart, with no trailing spaces")
    func aligned() {
        var table = Table(header: ["UNIT", "VALUE", "REASON"])
        table.append(["u-1", "true", "STATIC"])
        table.append(["acct-load-test", "100000", ""])
        #expect(
            table.lines() == [
                "UNIT            VALUE   REASON",
                "u-1             true    STATIC",
                "acct-load-test  100000",
            ])
    }

    @Test("a table wider than 100 columns is fitted by cutting the widest column with …")
    func fitted() {
        var table = Table(header: ["UNIT", "VALUE", "REASON", "VARIANT"])
        let long = "{\"sections\":[" + String(repeating: "\"recommended\",", count: 12) + "\"end\"]}"
        table.append(["u-1", long, "TARGETING_MATCH", "large-screens"])
        table.append(["u-2", "2", "DEFAULT", "default"])
        let lines = table.lines()
        #expect(lines.allSatisfy { $0.count <= 100 })
        #expect(lines[1].count == 100)
        #expect(lines[1].hasPrefix("u-1   {\"sections\":[\"recommended\","))
        #expect(lines[1].hasSuffix("…  TARGETING_MATCH  large-screens"))
        #expect(lines[2] == "u-2   2" + String(repeating: " ", count: 63) + "DEFAULT          default")
    }

    @Test("no column is cut below its header or 8 characters, even if the table stays too wide")
    func floor() {
        var table = Table(header: ["A", "B"])
        table.append([String(repeating: "a", count: 90), String(repeating: "b", count: 90)])
        #expect(table.columnWidths(fitting: 100) == [49, 49])
        #expect(table.columnWidths(fitting: 10) == [8, 8])
    }
}
