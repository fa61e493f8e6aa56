import FlagTestSupport
import Foundation
import Testing

/// FlagClient's privacy manifest (docs/client.md, "Privacy manifest"): a valid property list that declares no
/// tracking, data linked to no one, and exactly the required-reason API categories the code it ships uses.
@Suite(.live) struct PrivacyManifestTests {
    static let manifest = BuiltProducts.repositoryRoot.appendingPathComponent(
        "Sources/FlagClient/Resources/PrivacyInfo.xcprivacy")

    /// The modules an app gets with FlagClient; the system's SQLite and CryptoKit have Apple's own manifests.
    static let shippedModules = ["FlagClient", "FlagCore", "FlagLock", "FlagSQLite", "FlagSigning"]

    /// Apple's required-reason API categories and the calls of each that Swift code would spell out.
    static let requiredReasonCalls: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": [
            "stat(", "fstat(", "lstat(", "fstatat(", "getattrlist", ".creationDate", ".modificationDate",
            "fileModificationDate", "contentModificationDateKey", "creationDateKey",
        ],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time"],
        "NSPrivacyAccessedAPICategoryDiskSpace": [
            "volumeAvailableCapacity", "statfs(", "statvfs(", "systemFreeSize", "systemSize",
        ],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults"],
    ]

    @Test func theToolchainsPlutilAcceptsIt() throws {
        guard let plutil = BuiltProducts.onPath("plutil") else {
            Issue.record("plutil is not on the PATH: the Swift toolchain has it (usr/bin/plutil)")
            return
        }
        let result = try Spawn.run(plutil, ["-lint", Self.manifest.path], in: FileManager.default.temporaryDirectory)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func itDeclaresNoTrackingAndNothingLinkedToAPerson() throws {
        let plist = try Self.readManifest()
        #expect(plist["NSPrivacyTracking"] as? Bool == false)
        #expect((plist["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)
        let collected = try #require(plist["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(
            Set(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }) == [
                "NSPrivacyCollectedDataTypeProductInteraction", "NSPrivacyCollectedDataTypeOtherDiagnosticData",
            ])
        for entry in collected {
            #expect(entry["NSPrivacyCollectedDataTypeLinked"] as? Bool == false, "\(entry)")
            #expect(entry["NSPrivacyCollectedDataTypeTracking"] as? Bool == false, "\(entry)")
            let purposes = entry["NSPrivacyCollectedDataTypePurposes"] as? [String] ?? []
            #expect(!purposes.isEmpty && !purposes.contains("NSPrivacyCollectedDataTypePurposeThirdPartyAdvertising"))
        }
    }

    /// A category the code uses must be declared (App Store Connect refuses the app otherwise), and a category it
    /// no longer uses must go (a declaration is a claim to reviewers).
    @Test func itDeclaresExactlyTheRequiredReasonAPIsTheCodeCalls() throws {
        let plist = try Self.readManifest()
        let accessed = try #require(plist["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var declared: Set<String> = []
        for entry in accessed {
            let category = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            let reasons = entry["NSPrivacyAccessedAPITypeReasons"] as? [String] ?? []
            #expect(!reasons.isEmpty, "\(category) names no reason")
            declared.insert(category)
        }
        var used: [String: [String]] = [:]
        for (file, line) in try Self.codeLines() {
            for (category, calls) in Self.requiredReasonCalls where calls.contains(where: line.contains) {
                used[category, default: []].append(file)
            }
        }
        #expect(Set(used.keys) == declared, "used: \(used), declared: \(declared.sorted())")
        #expect(used["NSPrivacyAccessedAPICategoryFileTimestamp"] != nil, "FileIdentity calls stat()")
    }

    static func readManifest() throws -> [String: Any] {
        let data = try Data(contentsOf: manifest)
        return try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    }

    /// Each line of Swift code (comments left out) in the shipped modules, with its file's name.
    static func codeLines() throws -> [(file: String, line: String)] {
        var lines: [(String, String)] = []
        for module in shippedModules {
            let directory = BuiltProducts.repositoryRoot.appendingPathComponent("Sources/\(module)")
            let files = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let path as String in files where path.hasSuffix(".swift") {
                let text = try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let code = line.trimmingCharacters(in: .whitespaces)
                    if !code.hasPrefix("//") { lines.append(("\(module)/\(path)", code)) }
                }
            }
        }
        #expect(lines.count > 1000, "the sources were not found under \(BuiltProducts.repositoryRoot.path)")
        return lines
    }
}
