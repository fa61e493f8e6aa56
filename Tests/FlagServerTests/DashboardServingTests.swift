import FlagAPI
import FlagCore
import FlagTestSupport
import Foundation
import Testing

@testable import FlagServer

/// The dashboard's files as flagserver serves them: only the files shipped with it, each with the headers that
/// keep a page of the admin API safe. The dashboard itself is tested in a real browser by `Tests/browser/run`.
@Suite("Dashboard: its files and their headers", .live)
struct DashboardServingTests {
    @Test(arguments: [
        ("/ui", "text/html; charset=utf-8"), ("/ui/", "text/html; charset=utf-8"),
        ("/ui/app.js", "text/javascript; charset=utf-8"), ("/ui/style.css", "text/css; charset=utf-8"),
    ])
    func aFileIsServedWithAStrictPolicy(path: String, type: String) async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", path, token: nil)
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == type)
            #expect(response.header("Content-Security-Policy") == DashboardFiles.contentSecurityPolicy)
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            #expect(response.header("Referrer-Policy") == "no-referrer")
            #expect(response.header("X-Frame-Options") == "DENY")
            #expect(!response.body.isEmpty)
        }
    }

    @Test(arguments: ["/ui/nope.js", "/ui/..", "/ui/..%2FPackage.swift", "/ui/%2e%2e", "/ui/index.html.bak"])
    func anythingElseIsNotFound(path: String) async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", path, token: nil)
            #expect(response.status == 404, "\(path)")
            #expect(!response.body.contains(Array("<html".utf8)), "\(path)")
        }
    }

    @Test func thePageLoadsOnlyScriptsAndStylesOfItsOwnWithoutInlineCode() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/FlagServer/Dashboard")
        let page = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(page.contains(#"<script type="module" src="/ui/app.js"></script>"#))
        #expect(!page.contains("style=") && !page.contains("<style") && !page.contains("onclick"))
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".js") {
            let code = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function", "localStorage"] {
                #expect(!code.contains(forbidden), "\(name) uses \(forbidden)")
            }
        }
    }

    /// The endpoint table the dashboard builds its paths and permissions from is FlagAPI's, and the node tests'
    /// fixture is the same bytes: `curl -s localhost:8080/ui/endpoints.json > Tests/dashboard/endpoints.json`
    /// after an endpoint changes.
    @Test func theEndpointTableIsServedAndTheNodeTestsFixtureIsCurrent() async throws {
        try await withHarness { harness in
            let response = try harness.send("GET", "/ui/endpoints.json", token: nil)
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.header("Content-Security-Policy") == DashboardFiles.contentSecurityPolicy)
            #expect(response.body == EndpointTable(API.all).encodedAnswer())
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("dashboard/endpoints.json")
            let bytes = try Array(Data(contentsOf: fixture))
            #expect(
                bytes.last == UInt8(ascii: "\n") && Array(bytes.dropLast()) == response.body,
                "Tests/dashboard/endpoints.json is not the served table: write it again from /ui/endpoints.json")
        }
    }

    /// The browser suite, from `swift test` when asked: .ci/run runs `Tests/browser/run` itself.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["FLAGSTAFF_BROWSER_TESTS"] == "1",
            "the dashboard in a real browser: run Tests/browser/run (needs chromium and chromium-driver), or set FLAGSTAFF_BROWSER_TESTS=1; .ci/run runs it"
        ))
    func theDashboardInARealBrowser() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let process = Process()
        process.executableURL = root.appendingPathComponent("Tests/browser/run")
        process.currentDirectoryURL = root
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "Tests/browser/run failed; its output is above")
    }
}
