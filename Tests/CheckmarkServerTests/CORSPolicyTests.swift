import CheckmarkServer
import CheckmarkWebSocket
import Testing

/// `cors_allowed_origins` as a pure decision: which preflights are answered, which refused, and which
/// headers every other answer carries.
@Suite("CORS policy")
struct CORSPolicyTests {
    static let app = "https://app.example"
    static let policy = try! CORSPolicy(setting: "\(app), http://localhost:3000")

    static func preflight(from origin: String, method: String = "POST") -> HTTPHeaderList {
        ["Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization, content-type"]
    }

    @Suite("The setting")
    struct Setting {
        @Test func emptyMeansNoCORSStarMeansEveryOriginOtherwiseTheListedOnes() throws {
            #expect(try CORSPolicy(setting: "").origins == .none)
            #expect(try CORSPolicy(setting: " , ").origins == .none)
            #expect(try CORSPolicy(setting: "*").origins == .any)
            #expect(try CORSPolicy(setting: " https://a.example ,http://127.0.0.1:5173").origins
                    == .only(["https://a.example", "http://127.0.0.1:5173"]))
        }

        @Test(arguments: ["https://a.example/", "https://a.example/app", "ftp://a.example", "a.example", "https://",
                          "*, https://a.example", "https://a.example?x=1"])
        func somethingThatIsNotAnOriginIsRefused(setting: String) {
            #expect(throws: CORSPolicy.Invalid.self) { try CORSPolicy(setting: setting) }
        }

        @Test func theLoaderReadsItAndNamesTheSourceOfABadValue() throws {
            let configuration = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_CORS_ALLOWED_ORIGINS": "https://a.example"], flags: [:])
            #expect(configuration.cors.origins == .only(["https://a.example"]))
            #expect(ServerConfiguration().cors.origins == .none)
            #expect {
                _ = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["cors_allowed_origins": "https://a.example/x"])
            } throws: { error in
                "\(error)".contains("flag --cors-allowed-origins: cors_allowed_origins:")
            }
        }
    }

    @Suite("Preflights")
    struct Preflights {
        @Test func aPreflightFromAnAllowedOriginGetsEveryHeader() throws {
            guard case .preflight(let headers) = CORSPolicyTests.policy.decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: CORSPolicyTests.app)) else {
                Issue.record("not answered as a preflight")
                return
            }
            #expect(headers.values("Access-Control-Allow-Origin") == [CORSPolicyTests.app])
            #expect(headers.tokens("Access-Control-Allow-Methods") == ["get", "post", "put", "patch"])
            for name in ["authorization", "content-type", "stream-auth-type", "x-stream-client"] {
                #expect(headers.tokens("Access-Control-Allow-Headers").contains(name))
            }
            #expect(headers.values("Access-Control-Max-Age") == ["600"])
            #expect(headers.values("Vary") == ["Origin"])
        }

        @Test func everyOriginIsAnsweredWithItselfUnderStar() throws {
            let decision = try CORSPolicy(setting: "*").decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: "http://any.example:8000"))
            guard case .preflight(let headers) = decision else {
                Issue.record("not answered: \(decision)")
                return
            }
            #expect(headers.values("Access-Control-Allow-Origin") == ["http://any.example:8000"])
        }

        @Test func aPreflightFromAnotherOriginIsRefused() {
            let decision = CORSPolicyTests.policy.decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: "https://evil.example"))
            #expect(decision == .refusePreflight("origin https://evil.example is not in cors_allowed_origins"))
        }

        @Test func anOriginDiffersByItsSchemeAndPort() {
            for origin in ["http://app.example", "https://app.example:443", "https://APP.example.evil"] {
                guard case .refusePreflight = CORSPolicyTests.policy.decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: origin)) else {
                    Issue.record("\(origin) was allowed")
                    continue
                }
            }
        }

        @Test func everyPreflightIsRefusedWithCORSOff() {
            guard case .refusePreflight(let reason) = CORSPolicy.none.decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: CORSPolicyTests.app)) else {
                Issue.record("not refused")
                return
            }
            #expect(reason.contains("cors_allowed_origins is empty"))
        }

        @Test func aMethodNoRouteUsesIsRefused() {
            guard case .refusePreflight(let reason) = CORSPolicyTests.policy.decide(method: "OPTIONS", headers: CORSPolicyTests.preflight(from: CORSPolicyTests.app, method: "DELETE")) else {
                Issue.record("not refused")
                return
            }
            #expect(reason.contains("DELETE"))
        }

        @Test func anOptionsRequestThatIsNoPreflightIsRouted() {
            #expect(CORSPolicyTests.policy.decide(method: "OPTIONS", headers: [:]) == .route(adding: [:]))
            #expect(CORSPolicy.none.decide(method: "OPTIONS", headers: ["Origin": CORSPolicyTests.app]) == .route(adding: [:]))
        }
    }

    @Suite("Other requests")
    struct OtherRequests {
        @Test func answersToAnAllowedOriginCarryItAndVary() {
            guard case .route(let headers) = CORSPolicyTests.policy.decide(method: "POST", headers: ["Origin": "http://localhost:3000"]) else {
                Issue.record("not routed")
                return
            }
            #expect(headers.values("Access-Control-Allow-Origin") == ["http://localhost:3000"])
            #expect(headers.values("Vary") == ["Origin"])
            #expect(!headers.values("Access-Control-Expose-Headers").isEmpty)
        }

        @Test func answersToOtherOriginsCarryOnlyVary() {
            #expect(CORSPolicyTests.policy.decide(method: "GET", headers: ["Origin": "https://evil.example"]) == .route(adding: ["Vary": "Origin"]))
        }

        @Test func requestsWithoutOriginOrWithCORSOffCarryNothing() {
            #expect(CORSPolicyTests.policy.decide(method: "POST", headers: [:]) == .route(adding: [:]))
            #expect(CORSPolicy.none.decide(method: "POST", headers: ["Origin": CORSPolicyTests.app]) == .route(adding: [:]))
        }
    }
}
