import FlagHTTP

#if canImport(Glibc)
    import Glibc
#endif

/// The route table compiled into a tree of path segments: a request's method and path are resolved once, into
/// its route and the values of the template's parameters, without splitting the path into strings.
///
/// Empty segments are skipped, so `/v1/sets/demo/` and `/v1//sets/demo` name the same route as `/v1/sets/demo`.
/// At any place in the tree the templates have either literal segments or one parameter, never both, so that a
/// path matches at most one template and the walk never backtracks.
struct Router: Sendable {
    /// One route at the end of a template. A class, so that handing a match on is one reference, not a copy of
    /// its parts.
    final class Endpoint: Sendable {
        let route: Route
        let method: String
        let spec: RouteSpec

        init(route: Route, method: String, spec: RouteSpec) {
            self.route = route
            self.method = method
            self.spec = spec
        }
    }

    /// What a request resolves to.
    enum Match: Sendable {
        /// The route, with the path's parameters.
        case route(Endpoint, RouteParameters)
        /// A template matches the path but none of its routes has the method; the least strict of them is given, so
        /// that the caller is checked as the path would check it: a caller that may call none of its methods learns
        /// nothing of which it has.
        case wrongMethod(Endpoint, RouteParameters)
        /// No template matches the path.
        case notFound
    }

    /// A node of the tree while it is built: children by segment.
    private struct Branch {
        var literals: [(segment: [UInt8], branch: Int)] = []
        var parameter: (name: RouteParameter, branch: Int)?
        var endpoints: [Endpoint] = []
    }

    /// A node of the compiled tree. Only indices into the router's arrays, so that walking the tree copies no
    /// reference (the walk runs on every request).
    private struct Node: Sendable {
        var literals: Range<Int> = 0..<0
        var parameter: Int?
        var parameterName = RouteParameter.set
        var endpoints: Range<Int> = 0..<0
    }

    /// A literal child: its segment is `literalBytes[bytes]`.
    private struct Literal: Sendable {
        let bytes: Range<Int>
        let node: Int
    }

    /// The tree, root first, with each node's literal children and endpoints stored contiguously.
    private var nodes: [Node] = []
    private var literals: [Literal] = []
    private var literalBytes: [UInt8] = []
    private var endpoints: [Endpoint] = []

    /// The routes that cannot be compiled: a template naming an unknown parameter, a parameter where another
    /// template has a literal segment (or the other way round), a parameter named differently from another route's
    /// at the same place, or two routes with one method and template. Empty for
    /// `Route.allCases` (a test checks it), so that no route is silently unreachable.
    private(set) var rejected: [Route] = []

    /// Compiles `routes`.
    init(_ routes: [Route] = Route.allCases) {
        self.init(templates: routes.map { ($0, $0.label) })
    }

    /// Compiles each route under a `METHOD /template` of its own, so that tests can compile templates that the
    /// table does not have.
    init(templates: [(route: Route, label: String)]) {
        var branches = [Branch()]
        for (route, label) in templates where !Self.add(route, label, to: &branches) { rejected.append(route) }
        nodes = Array(repeating: Node(), count: branches.count)
        for (index, branch) in branches.enumerated() {
            let firstLiteral = literals.count
            for (segment, child) in branch.literals {
                literals.append(Literal(bytes: literalBytes.count..<(literalBytes.count + segment.count), node: child))
                literalBytes += segment
            }
            nodes[index].literals = firstLiteral..<literals.count
            if let (name, child) = branch.parameter {
                nodes[index].parameter = child
                nodes[index].parameterName = name
            }
            nodes[index].endpoints = endpoints.count..<(endpoints.count + branch.endpoints.count)
            endpoints += branch.endpoints
        }
    }

    private static func add(_ route: Route, _ label: String, to branches: inout [Branch]) -> Bool {
        let method = String(label.prefix { $0 != " " })
        let template = label.drop { $0 != " " }.dropFirst()
        var branch = 0
        for segment in template.split(separator: "/") {
            if segment.first == "{" && segment.last == "}" {
                guard let name = RouteParameter(rawValue: String(segment.dropFirst().dropLast())),
                    branches[branch].literals.isEmpty
                else { return false }
                if let (existing, next) = branches[branch].parameter {
                    guard existing == name else { return false }
                    branch = next
                } else {
                    branches.append(Branch())
                    branches[branch].parameter = (name, branches.count - 1)
                    branch = branches.count - 1
                }
            } else if branches[branch].parameter != nil {
                return false
            } else if let next = branches[branch].literals.first(where: { $0.segment.elementsEqual(segment.utf8) }) {
                branch = next.branch
            } else {
                branches.append(Branch())
                branches[branch].literals.append((Array(segment.utf8), branches.count - 1))
                branch = branches.count - 1
            }
        }
        guard !branches[branch].endpoints.contains(where: { $0.method == method }) else { return false }
        branches[branch].endpoints.append(Endpoint(route: route, method: method, spec: route.spec))
        return true
    }

    /// Resolves a request; `HEAD` finds the `GET` route of routes that answer it.
    func match(method: String, path: String) -> Match {
        var path = path
        return path.withUTF8 { path in
            literalBytes.withUnsafeBytes { literalBytes in
                let path = UnsafeRawBufferPointer(path)
                var captures = Captures()
                guard let node = find(path, literalBytes, &captures) else { return .notFound }
                let parameters = captures.parameters(in: path)
                let range = nodes[node].endpoints
                if let index = range.first(where: { endpoints[$0].method == method }) {
                    return .route(endpoints[index], parameters)
                }
                if method == "HEAD",
                    let index = range.first(where: { endpoints[$0].method == "GET" && endpoints[$0].spec.answersHead })
                {
                    return .route(endpoints[index], parameters)
                }
                let loosest = range.min { endpoints[$0].spec.access.strictness < endpoints[$1].spec.access.strictness }
                return .wrongMethod(endpoints[loosest ?? range.lowerBound], parameters)
            }
        }
    }

    /// The node whose template matches `path`, with its parameters captured. One walk down, no backtracking: a
    /// node has literal children or a parameter child, never both.
    private func find(
        _ path: UnsafeRawBufferPointer, _ literalBytes: UnsafeRawBufferPointer, _ captures: inout Captures
    ) -> Int? {
        guard let base = path.baseAddress else { return nil }
        var position = 0
        var node = 0
        while true {
            while position < path.count && path[position] == UInt8(ascii: "/") { position += 1 }
            if position == path.count { return nodes[node].endpoints.isEmpty ? nil : node }
            let slash = memchr(base + position, Int32(UInt8(ascii: "/")), path.count - position)
            let end = slash.map { UnsafeRawPointer($0) - base } ?? path.count
            let current = nodes[node]
            if let parameter = current.parameter {
                captures[current.parameterName] = position..<end
                node = parameter
            } else {
                let literal = current.literals.first { index in
                    let literal = literals[index]
                    guard literal.bytes.count == end - position, let literalBase = literalBytes.baseAddress else {
                        return false
                    }
                    return memcmp(literalBase + literal.bytes.lowerBound, base + position, literal.bytes.count) == 0
                }
                guard let literal else { return nil }
                node = literals[literal].node
            }
            position = end
        }
    }

    /// Where each parameter's value lies in the path while it is being matched.
    private struct Captures {
        var set: Range<Int>?
        var key: Range<Int>?
        var name: Range<Int>?
        var version: Range<Int>?

        subscript(_ parameter: RouteParameter) -> Range<Int>? {
            get {
                switch parameter {
                case .set: set
                case .key: key
                case .name: name
                case .version: version
                }
            }
            set {
                switch parameter {
                case .set: set = newValue
                case .key: key = newValue
                case .name: name = newValue
                case .version: version = newValue
                }
            }
        }

        func parameters(in bytes: UnsafeRawBufferPointer) -> RouteParameters {
            func text(_ range: Range<Int>?) -> String {
                range.map { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[$0]), as: UTF8.self) } ?? ""
            }
            return RouteParameters(set: text(set), key: text(key), name: text(name), version: text(version))
        }
    }
}

/// A parameter a path template may name, e.g. `{set}`.
enum RouteParameter: String, Sendable {
    case set
    case key
    case name
    /// `{n}`, a version number.
    case version = "n"
}

/// The values of a matched path's parameters; empty for a parameter the route's template does not have.
struct RouteParameters: Sendable {
    var set = ""
    var key = ""
    var name = ""
    var version = ""
}
