import FlagTestSupport
import Foundation
import Testing

@testable import FlagHTTP
@testable import FlagServer

/// The route table compiled into the router: every template is reachable, parameters are captured, and the caller
/// is checked before any handler runs, under the route's own `/metrics` label.
@Suite("Router: routes as data")
struct RouterTests {
    let router = Router()

    /// The template with each `{parameter}` replaced by a value naming it, e.g. `/v1/sets/set-value`.
    static func concrete(_ route: Route) -> String {
        route.template.split(separator: "/").map { segment in
            segment.first == "{" ? "\(segment.dropFirst().dropLast())-value" : String(segment)
        }.reduce("") { $0 + "/" + $1 }
    }

    @Test func everyRouteCompiles() {
        #expect(router.rejected == [])
    }

    @Test(arguments: Route.allCases)
    func everyTemplateResolvesToItsOwnRoute(_ route: Route) throws {
        guard
            case .route(let endpoint, let parameters) = router.match(
                method: String(route.method), path: Self.concrete(route))
        else {
            Issue.record("\(route.label) does not resolve")
            return
        }
        #expect(endpoint.route == route)
        let template = route.template
        #expect(parameters.set == (template.contains("{set}") ? "set-value" : ""))
        #expect(parameters.key == (template.contains("{key}") ? "key-value" : ""))
        #expect(parameters.name == (template.contains("{name}") ? "name-value" : ""))
        #expect(parameters.version == (template.contains("{n}") ? "n-value" : ""))
    }

    @Test func twoRoutesWithOneMethodAndTemplateAreRejected() {
        #expect(Router([.kill, .kill]).rejected == [.kill])
    }

    @Test func aLiteralBesideAParameterIsRejected() {
        // Shared parameters and sibling literals compile; a parameter beside a literal is refused, whichever
        // comes first, and so is a parameter named differently at the same place.
        #expect(Router(templates: [(.health, "GET /a/{set}"), (.metrics, "GET /a/{set}/b")]).rejected == [])
        #expect(Router(templates: [(.health, "GET /a/b"), (.metrics, "GET /a/c")]).rejected == [])
        #expect(Router(templates: [(.health, "GET /a/{set}"), (.metrics, "GET /a/b")]).rejected == [.metrics])
        #expect(Router(templates: [(.health, "GET /a/b"), (.metrics, "GET /a/{set}")]).rejected == [.metrics])
        #expect(Router(templates: [(.health, "GET /a/{set}"), (.metrics, "GET /a/{key}/b")]).rejected == [.metrics])
        #expect(Router(templates: [(.health, "GET /a/{sett}")]).rejected == [.health])
    }

    @Test func aSegmentIsALiteralOrAParameterByItsPlace() {
        // `audit` is a literal under /v1/admin and a set name under /v1/admin/sets.
        guard case .route(let audit, _) = router.match(method: "GET", path: "/v1/admin/audit") else {
            Issue.record("no route")
            return
        }
        #expect(audit.route == .audit)
        guard case .route(let export, let parameters) = router.match(method: "GET", path: "/v1/admin/sets/audit")
        else {
            Issue.record("no route")
            return
        }
        #expect(export.route == .exportSet && parameters.set == "audit")
        // A set called `flags` still has flags.
        guard case .route(let list, let named) = router.match(method: "GET", path: "/v1/admin/sets/flags/flags")
        else {
            Issue.record("no route")
            return
        }
        #expect(list.route == .listFlags && named.set == "flags")
    }

    @Test func emptySegmentsAreSkipped() {
        for path in ["/v1/sets/demo/", "//v1//sets/demo", "/v1/sets/demo//"] {
            guard case .route(let endpoint, let parameters) = router.match(method: "GET", path: path) else {
                Issue.record("\(path) does not resolve")
                continue
            }
            #expect(endpoint.route == .document && parameters.set == "demo", "\(path)")
        }
    }

    @Test func headIsAnsweredOnlyWhereTheTableSaysSo() {
        for route in Route.allCases where route.method == "GET" {
            let match = router.match(method: "HEAD", path: Self.concrete(route))
            switch match {
            case .route(let endpoint, _): #expect(route.answersHead && endpoint.route == route, "\(route.label)")
            case .wrongMethod: #expect(!route.answersHead, "\(route.label)")
            case .notFound: Issue.record("\(route.label) not found")
            }
        }
    }

    @Test func unknownPathsAndMethodsAreTold() {
        for path in ["/", "/v1", "/v1/sets", "/v1/admin", "/v1/sets/demo/nope", "/ofrep/v1/evaluate/flags/a/b"] {
            guard case .notFound = router.match(method: "GET", path: path) else {
                Issue.record("\(path) resolved")
                continue
            }
        }
        guard case .wrongMethod(let endpoint, _) = router.match(method: "PATCH", path: "/v1/admin/sets/demo/flags/x")
        else {
            Issue.record("PATCH resolved")
            return
        }
        #expect([Route.getFlag, .putFlag, .deleteFlag].contains(endpoint.route))
    }

    /// A path answers `405` after checking the caller as its least strict route would. The routes of one template
    /// may differ in role by method, but not in who calls them (a client, or a token of the admin API), so that the
    /// check of a wrong method never turns an SDK key's 403 into a 405.
    @Test func routesSharingATemplateShareTheirKindOfCaller() throws {
        let byTemplate = Dictionary(grouping: Route.allCases, by: { String($0.template) })
        for (template, routes) in byTemplate {
            let kinds = Set(routes.map { $0.role == nil ? "client" : "admin API" })
            #expect(kinds.count == 1, "\(template): \(kinds)")
        }
        let router = Router()
        guard case .wrongMethod(let endpoint, _) = router.match(method: "PATCH", path: "/v1/admin/sets") else {
            Issue.record("PATCH /v1/admin/sets resolved")
            return
        }
        // Listing sets is a viewer's, creating one an unlimited admin's: the check is the viewer's.
        #expect(endpoint.route == .listSets)
    }

    /// Refusals are counted under the route they were refused on, not as `unmatched`.
    @Test func refusalsAreCountedUnderTheirRoute() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let kill = "/v1/admin/sets/ios-prod/flags/new-checkout/kill"
            #expect(try harness.send("POST", kill, token: nil).status == 401)
            #expect(try harness.send("POST", kill, token: harness.sdk).status == 403)
            #expect(harness.app.metrics.requests(route: Route.kill.label, status: 401) == 1)
            #expect(harness.app.metrics.requests(route: Route.kill.label, status: 403) == 1)
            #expect(harness.app.metrics.requests(route: "unmatched", status: 401) == 0)
            #expect(try harness.send("GET", "/v1/admin/nothing-here").status == 404)
            #expect(harness.app.metrics.requests(route: "unmatched", status: 404) == 1)
        }
    }

    /// The connection's memo of its last set serves every set route, and follows changes and other sets.
    @Test func oneConnectionFollowsChangesAcrossSetRoutesAndSets() async throws {
        try await withHarness { (harness: AppHarness) async throws in
            let connection = HTTPConnectionContext()
            let client = InProcessClient(handler: harness.app.handler, connection: connection)
            func send(_ method: String, _ target: String) throws -> TestResponse {
                try client.send(method, target, token: harness.admin)
            }
            let flag = "/v1/admin/sets/ios-prod/flags/new-checkout"
            #expect(try send("GET", flag).json("flag.killed") != .bool(true))
            #expect(ConnectionMemo.of(connection)?.set?.name == "ios-prod")
            #expect(try send("POST", "\(flag)/kill").status == 200)
            #expect(try send("GET", flag).json("flag.killed") == .bool(true))
            #expect(try send("GET", "/v1/sets/ios-prod").header("ETag") == "\"2\"")
            #expect(try send("GET", "/v1/sets/android-prod").header("ETag") == "\"1\"")
            #expect(ConnectionMemo.of(connection)?.set?.name == "android-prod")
            #expect(try send("GET", "/v1/sets/no-such-set").status == 404)
            #expect(try send("GET", "/v1/sets/ios-prod").header("ETag") == "\"2\"")
        }
    }
}
