import Testing

@testable import FlagCore

@Suite("SemanticVersion")
struct SemanticVersionTests {
    @Test("all 400 precedence comparisons of Vectors/semver.json")
    func fileComparisons() throws {
        let comparisons = try PrimitiveVectors.semver().comparisons
        #expect(comparisons.count == 400)
        for vector in comparisons {
            guard let a = SemanticVersion(vector.a), let b = SemanticVersion(vector.b) else {
                Issue.record("\(vector.a) or \(vector.b) did not parse")
                continue
            }
            #expect(SemanticVersion.compare(a, b) == vector.order, "\(vector.a) vs \(vector.b)")
            #expect(SemanticVersion.compare(b, a) == -vector.order, "\(vector.b) vs \(vector.a)")
            #expect((a < b) == (vector.order < 0) && (a > b) == (vector.order > 0) && (a == b) == (vector.order == 0))
            if vector.order == 0 { #expect(a.hashValue == b.hashValue) }
        }
    }

    @Test("all 15 validity vectors of Vectors/semver.json")
    func fileValidity() throws {
        let validity = try PrimitiveVectors.semver().validity
        #expect(validity.count == 15)
        for (version, valid) in validity {
            #expect((SemanticVersion(version) != nil) == valid, "\(version.debugDescription)")
        }
    }

    @Test("the SemVer §11 example chain is strictly increasing")
    func specChain() throws {
        let chain = [
            "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "2.0.0", "2.1.0", "2.1.1",
        ]
        let versions = try chain.map { try #require(SemanticVersion($0)) }
        for (lower, higher) in zip(versions, versions.dropFirst()) {
            #expect(lower < higher, "\(lower) < \(higher)")
            #expect(!(higher < lower) && lower != higher)
        }
        #expect(versions.shuffled().sorted() == versions)
    }

    @Test("numeric identifiers beyond 64 bits compare by length, then digits")
    func hugeNumbers() throws {
        let pairs = [
            ("1.0.0-99999999999999999999998", "1.0.0-99999999999999999999999"),
            ("1.0.0-9999999999999999999999", "1.0.0-10000000000000000000000"),
            ("18446744073709551615.0.0", "18446744073709551616.0.0"),
            ("1.99999999999999999999999999999.0", "1.100000000000000000000000000000.0"),
            ("1.0.99999999999999999999", "1.0.100000000000000000000"),
            ("1.0.0-99999999999999999999999", "1.0.0-a"),
        ]
        for (lower, higher) in pairs {
            let a = try #require(SemanticVersion(lower))
            let b = try #require(SemanticVersion(higher))
            #expect(a < b, "\(lower) < \(higher)")
            #expect(SemanticVersion.compare(b, a) == 1)
        }
        let huge = try #require(SemanticVersion("123456789012345678901234567890.0.1"))
        #expect(huge.major == "123456789012345678901234567890")
    }

    @Test("pre-release rules: numeric < alphanumeric, ASCII order, longer set higher")
    func preReleaseRules() throws {
        let pairs = [
            ("1.0.0-1", "1.0.0-a"), ("1.0.0-2", "1.0.0-10"), ("1.0.0-Z", "1.0.0-a"), ("1.0.0-a", "1.0.0-a.0"),
            ("1.0.0-a.b", "1.0.0-a-b"), ("1.0.0-alpha", "1.0.0-alpha0"), ("1.0.0-0", "1.0.0"),
            ("1.0.0-rc.1", "1.0.0-rc.1.0"), ("1.0.0-11", "1.0.0-1a"),
        ]
        for (lower, higher) in pairs {
            #expect(
                try #require(SemanticVersion(lower)) < (try #require(SemanticVersion(higher))), "\(lower) < \(higher)")
        }
    }

    @Test("build metadata is validated but plays no part in ==, < or hashing")
    func buildMetadataIgnored() throws {
        let a = try #require(SemanticVersion("1.0.0-rc.1+build.1"))
        let b = try #require(SemanticVersion("1.0.0-rc.1+exp.sha.5114f85"))
        let c = try #require(SemanticVersion("1.0.0-rc.1"))
        #expect(a == b && b == c && !(a < b) && !(b < a))
        #expect(Set([a, b, c]).count == 1)
        #expect(a.description == "1.0.0-rc.1+build.1")
        #expect(a.buildMetadata == ["build", "1"] && c.buildMetadata.isEmpty)
        #expect(SemanticVersion("1.0.0+001") != nil)  // leading zeros are fine in build metadata
    }

    @Test("components are exposed as written")
    func components() throws {
        let version = try #require(SemanticVersion("10.20.30-rc.1.x-y+build.7"[...]))
        #expect(version.major == "10" && version.minor == "20" && version.patch == "30")
        #expect(version.isPreRelease && version.preRelease == ["rc", "1", "x-y"])
        #expect(version.buildMetadata == ["build", "7"])
        // The generic initializer, as code written over any StringProtocol reaches it.
        func parse<S: StringProtocol>(_ text: S) -> SemanticVersion? { SemanticVersion(text) }
        #expect(parse("1.2.3-rc.1"[...]) == SemanticVersion("1.2.3-rc.1"))
        #expect(parse("1.2.03") == nil)
        let plain = try #require(SemanticVersion("0.0.0"))
        #expect(!plain.isPreRelease && plain.preRelease.isEmpty && plain.buildMetadata.isEmpty)
    }

    @Test(
        "strict parse rejects",
        arguments: [
            "", "1", "1.2", "1.2.3.4", "v1.2.3", "V1.2.3", " 1.2.3", "1.2.3 ", "01.2.3", "1.02.3", "1.2.03", "00.0.0",
            "1.2.3-", "1.2.3+", "1.2.3-01", "1.2.3-rc.01", "1.2.3-a..b", "1.2.3-a.", "1.2.3-.a", "1.2.3+a..b",
            "1.2.3+a.", "1.2.3-a+b+c", "1.2.3-α", "1.2.3+é", "1.2.3-a_b", "-1.2.3", "1.-2.3", "+1.2.3", "1..3",
            "1.2.", ".2.3", "1.2.3-a b", "a.b.c", "1.2.3\n", "１.2.3",
        ]
    )
    func rejects(text: String) {
        #expect(SemanticVersion(text) == nil)
    }

    @Test(
        "strict parse accepts",
        arguments: [
            "0.0.0", "0.0.4", "1.2.3", "10.20.30", "1.1.2-prerelease+meta", "1.1.2+meta", "1.1.2+meta-valid",
            "1.0.0-alpha", "1.0.0-alpha.beta.1", "1.0.0-alpha0.valid", "1.0.0-rc.1+build.1", "2.0.0-rc.1+build.123",
            "1.2.3----RC-SNAPSHOT.12.9.1--.12+788", "1.2.3----R-S.12.9.1--.12+meta", "1.0.0-0A.is.legal",
            "1.0.0+0.build.1-rc.10000aaa-kk-0.1", "99999999999999999999999.999999999999999999.99999999999999999",
            "1.2.3-0", "1.2.3-0a", "1.2.3-00a",
        ]
    )
    func accepts(text: String) throws {
        let version = try #require(SemanticVersion(text))
        #expect(version.description == text)
        #expect(version == version && !(version < version))
    }
}
