import CheckmarkCore
import CheckmarkServer
import Testing

/// Stream's routes that Checkmark does not serve are answered 501 `not_served` naming the feature
/// (never a bare 404 or 405), and none of them shadows a route Checkmark serves.
@Suite("Stream routes not served")
struct UnservedStreamRouteTests {
    /// `template` with every placeholder filled.
    static func sample(_ template: String) -> String {
        template.split(separator: "/").map { $0.first == "{" ? "x1" : String($0) }.reduce("") { $0 + "/" + $1 }
    }

    @Test func noUnservedRouteIsOneCheckmarkServes() {
        for route in UnservedStreamRoute.all {
            if case .found(let served, _) = APIRoute.match(method: route.method, path: Self.sample(route.template)) {
                Issue.record("\(route.method) \(route.template) is served as \(served)")
            }
        }
    }

    @Test func aRequestForOneMatchesItsFeature() {
        #expect(UnservedStreamRoute.match(method: "POST", path: "/messages/m1/reactions")?.feature == "querying reactions")
        #expect(UnservedStreamRoute.match(method: "GET", path: "/users")?.feature == "querying users")
        #expect(UnservedStreamRoute.match(method: "PATCH", path: "/channels/messaging/general/member/ann")?.feature == "member updates",
                "the SDKs' pin and archive of a channel")
        #expect(UnservedStreamRoute.match(method: "DELETE", path: "/users") == nil)
        #expect(UnservedStreamRoute.match(method: "GET", path: "/nothing") == nil)
    }

}

extension EndToEnd {
    @Suite("Stream routes not served, over HTTP", .serialized)
    struct UnservedStreamRouteHTTPTests {
        @Test func unservedRoutesAnswer501NamingTheFeatureAndOthersStay404Or405() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            let headers = ["Authorization": TestServer.serverToken]
            let key = "api_key=\(TestServer.apiKey)"
            for (method, path, feature) in [("GET", "/search", "search"), ("GET", "/users", "querying users"),
                                            ("POST", "/messages/m1/reactions", "querying reactions"), ("POST", "/uploads/image", "uploads")] {
                let answer = try server.http(method, path + "?" + key, headers: headers)
                #expect(answer.status == 501, "\(method) \(path): \(answer.body)")
                #expect(answer.body.contains(#""code":-1"#) && answer.body.contains("does not serve \(feature)"), "\(answer.body)")
            }
            #expect(try server.http("GET", "/nothing?" + key, headers: headers).status == 404)
            #expect(try server.http("DELETE", "/users?" + key, headers: headers).status == 405)
        }
    }
}
