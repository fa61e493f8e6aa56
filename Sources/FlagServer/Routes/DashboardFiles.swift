import FlagAPI
import FlagHTTP
import Foundation

/// The dashboard's static files (`Sources/FlagServer/Dashboard/`, shipped as the module's resources), read once when
/// the server starts and served under `/ui/` with the headers that keep a page of the admin API safe: a strict
/// Content-Security-Policy (no inline script or style, no framing), `nosniff` and no referrer. Beside them,
/// `endpoints.json` is FlagAPI's endpoint table, from which the dashboard builds its paths and permissions.
struct DashboardFiles: Sendable {
    /// Every response by file name; `""` is the page itself.
    private let files: [String: HTTPResponse]

    /// What the browser may load and run: only this server's files and calls, nothing inline, never in a frame.
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    /// The headers of every file.
    static let securityHeaders: HTTPHeaders = [
        "Content-Security-Policy": contentSecurityPolicy, "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "Cache-Control": "no-cache",
    ]

    /// The files of `directory` (not its subdirectories); none when it is `nil` or cannot be read.
    init(directory: URL?) {
        var files: [String: HTTPResponse] = [:]
        let names = directory.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0.path) } ?? []
        for name in names {
            guard let directory, let type = Self.contentType(of: name),
                let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
            else { continue }
            var headers = Self.securityHeaders
            headers.add(name: "Content-Type", value: type)
            files[name] = .prepared(status: 200, headers: headers, body: Array(data))
        }
        if let page = files["index.html"] { files[""] = page }
        var headers = Self.securityHeaders
        headers.add(name: "Content-Type", value: "application/json")
        files[Self.endpointTableName] = .prepared(status: 200, headers: headers, body: Self.endpointTable)
        self.files = files
    }

    /// The name under `/ui/` of the endpoint table.
    static let endpointTableName = "endpoints.json"

    /// `API.all` as the dashboard reads it.
    static var endpointTable: [UInt8] { EndpointTable(API.all).encodedAnswer() }

    /// The dashboard shipped with this module: SwiftPM copies it into `Flagstaff_FlagServer.resources` beside the
    /// executable (the Dockerfile copies that directory too). Looked up by hand rather than through `Bundle.module`,
    /// which stops the process when the directory is missing: a server without it serves the API, and says on `/ui`
    /// that it has no dashboard.
    static var bundled: DashboardFiles {
        let directory = Bundle.main.bundleURL.appendingPathComponent("Flagstaff_FlagServer.resources/Dashboard")
        return DashboardFiles(directory: FileManager.default.fileExists(atPath: directory.path) ? directory : nil)
    }

    /// Whether there is a page to serve.
    var isAvailable: Bool { files[""] != nil }

    /// The answer for `/ui/{name}` (`""`: the page); 404 for any other name.
    func response(for name: String) -> HTTPResponse {
        if let file = files[name] { return file }
        var headers = Self.securityHeaders
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        let message = isAvailable ? "no dashboard file \(name)" : "this flagserver was built without its dashboard"
        return HTTPResponse(status: 404, headers: headers, body: Array(message.utf8))
    }

    /// The `Content-Type` of a file the dashboard serves, by extension; `nil` for any other file.
    static func contentType(of name: String) -> String? {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        case "png": "image/png"
        case "ico": "image/x-icon"
        default: nil
        }
    }
}

extension FlagServerApp {
    /// `GET /ui` and `GET /ui/{name}`: the dashboard.
    func dashboardFile(_ call: Call, _ name: String) -> HTTPResponse {
        dashboard.response(for: name)
    }
}
