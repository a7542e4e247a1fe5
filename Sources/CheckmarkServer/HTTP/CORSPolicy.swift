import CheckmarkWebSocket

/// Which web origins may call the REST API from a browser (the `cors_allowed_origins` setting), and
/// what that means for one request: request method and headers in, a decision with the headers to
/// send out. Pure: no I/O.
///
/// - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an allowed origin
///   for one of ``allowedMethods`` is answered 204 with `Access-Control-Allow-Origin` (the origin),
///   `-Allow-Methods`, `-Allow-Headers`, `-Max-Age` and `Vary: Origin`; any other preflight, CORS
///   off included, is refused (403).
/// - Any other request is routed as usual; from an allowed origin its answer, errors included,
///   carries `Access-Control-Allow-Origin`, `Access-Control-Expose-Headers` and `Vary: Origin`.
package struct CORSPolicy: Sendable, Hashable {
    /// The origins the setting allows.
    package enum Origins: Sendable, Hashable {
        /// No CORS: no CORS headers, every preflight refused (the default).
        case none
        /// `*`: every origin.
        case any
        /// These exact origins (`scheme://host[:port]`).
        case only(Set<String>)
    }

    package var origins: Origins

    /// Methods a cross-origin request may use: those of the REST routes.
    package static let allowedMethods = ["GET", "POST", "PUT", "PATCH"]
    /// Request headers a cross-origin request may send: what Stream's clients send.
    package static let allowedHeaders = ["Authorization", "Content-Type", "Stream-Auth-Type", "X-Stream-Client", "X-Client-Request-Id"]
    /// Response headers a page may read besides the safelisted ones.
    package static let exposedHeaders = ["Allow", "Retry-After"]
    /// Seconds a browser may cache a preflight's answer.
    package static let maxAgeSeconds = 600

    package static let none = CORSPolicy(origins: .none)

    package init(origins: Origins) {
        self.origins = origins
    }

    /// An invalid `cors_allowed_origins` value, with the reason.
    package struct Invalid: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// Parses the setting: empty for none, `*` for any, or comma-separated origins, each
    /// `http://` or `https://`, a host and an optional port, with no path, query or trailing slash.
    package init(setting: String) throws(Invalid) {
        let items = setting.split(separator: ",").map { String($0.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
            .filter { !$0.isEmpty }
        if items.isEmpty {
            self.init(origins: .none)
            return
        }
        if items.contains("*") {
            guard items.count == 1 else { throw Invalid(description: "* allows every origin and cannot be listed with others") }
            self.init(origins: .any)
            return
        }
        for item in items {
            guard let rest = item.hasPrefix("http://") ? item.dropFirst(7) : item.hasPrefix("https://") ? item.dropFirst(8) : nil,
                  !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@"),
                  !rest.contains(" ") else {
                throw Invalid(description: "'\(item)' is not an origin: scheme://host[:port], http or https, no path")
            }
        }
        self.init(origins: .only(Set(items)))
    }

    /// What to do with one request.
    package enum Decision: Sendable, Hashable {
        /// Route the request as usual and add these headers to its answer (none: not a cross-origin
        /// request, or one from an origin that is not allowed, which the browser then blocks).
        case route(adding: HTTPHeaderList)
        /// A preflight to answer at once with 204 and these headers.
        case preflight(HTTPHeaderList)
        /// A preflight to refuse with 403, for this reason.
        case refusePreflight(String)
    }

    package func decide(method: String, headers: HTTPHeaderList) -> Decision {
        guard let origin = headers.values("Origin").first else { return .route(adding: [:]) }
        let requestedMethod = headers.values("Access-Control-Request-Method").first
        let isPreflight = method == "OPTIONS" && requestedMethod != nil
        guard allows(origin) else {
            guard isPreflight else {
                // Where CORS is on, the answer depends on the Origin: caches must know.
                return .route(adding: origins == .none ? [:] : ["Vary": "Origin"])
            }
            switch origins {
            case .none: return .refusePreflight("cross-origin requests are not allowed here (cors_allowed_origins is empty); origin \(origin)")
            case .any, .only: return .refusePreflight("origin \(origin) is not in cors_allowed_origins")
            }
        }
        guard isPreflight, let requestedMethod else {
            return .route(adding: [
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Expose-Headers": Self.exposedHeaders.joined(separator: ", "),
                "Vary": "Origin",
            ])
        }
        guard Self.allowedMethods.contains(requestedMethod) else {
            return .refusePreflight("method \(requestedMethod) is not allowed cross-origin (allowed: \(Self.allowedMethods.joined(separator: ", ")))")
        }
        return .preflight([
            "Access-Control-Allow-Origin": origin,
            "Access-Control-Allow-Methods": Self.allowedMethods.joined(separator: ", "),
            "Access-Control-Allow-Headers": Self.allowedHeaders.joined(separator: ", "),
            "Access-Control-Max-Age": String(Self.maxAgeSeconds),
            "Vary": "Origin",
        ])
    }

    /// Whether requests from `origin` (the `Origin` header as sent) may read the answers.
    package func allows(_ origin: String) -> Bool {
        switch origins {
        case .none: false
        case .any: true
        case .only(let allowed): allowed.contains(origin)
        }
    }
}
