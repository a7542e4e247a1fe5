import CheckmarkServer
import Foundation
import Testing

extension EndToEnd {
    /// `/demo`: served with the development credentials or `demo=true`, 404 otherwise, and a page that
    /// loads nothing from elsewhere and receives the secret only when it is the public development one.
    @Suite("Demo page", .serialized)
    struct DemoTests {
        static func development(_ configuration: inout ServerConfiguration) {
            configuration.apiKey = ServerConfiguration.developmentAPIKey
            configuration.apiSecret = ServerConfiguration.developmentAPISecret
        }

        @Test func theDemoIsServedWithTheDevelopmentCredentials() async throws {
            let server = try await TestServer.start(Self.development)
            defer { Task { await server.stop() } }
            let page = try HTTPExchange.send(port: server.port, "GET", "/demo?user=ben")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.body.contains("<!doctype html>"))
            #expect(page.body.contains(#""apiKey":"checkmark-dev-key""#))
            #expect(page.body.contains(#""secret":"checkmark-dev-secret-NOT-FOR-PRODUCTION""#))
            #expect(page.body.contains(#""channelType":"receipts-demo""#))
        }

        @Test func otherCredentialsWithDemoAutoAnswer404() async throws {
            let server = try await TestServer.start()
            defer { Task { await server.stop() } }
            #expect(server.configuration.demo == .auto)
            let page = try HTTPExchange.send(port: server.port, "GET", "/demo")
            #expect(page.status == 404)
            #expect(page.body.contains(#""StatusCode":404"#))
        }

        @Test func demoTrueServesThePageWithoutTheSecret() async throws {
            let server = try await TestServer.start { $0.demo = .on }
            defer { Task { await server.stop() } }
            let page = try HTTPExchange.send(port: server.port, "GET", "/demo")
            #expect(page.status == 200)
            #expect(page.body.contains(#""apiKey":"\#(TestServer.apiKey)""#))
            #expect(page.body.contains(#""secret":null"#))
            #expect(!page.body.contains(TestServer.apiSecret))
            #expect(page.body.contains("Paste a user token"))
        }

        @Test func demoFalseAnswers404EvenWithTheDevelopmentCredentials() async throws {
            let server = try await TestServer.start { Self.development(&$0); $0.demo = .off }
            defer { Task { await server.stop() } }
            #expect(try HTTPExchange.send(port: server.port, "GET", "/demo").status == 404)
        }

        @Test func thePageLoadsNothingFromElsewhere() async throws {
            let server = try await TestServer.start(Self.development)
            defer { Task { await server.stop() } }
            let page = try HTTPExchange.send(port: server.port, "GET", "/demo")
            #expect(page.status == 200)
            let html = page.body.lowercased()
            #expect(!html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"))
            for attribute in [" src=", "@import", ": url(", " url("] { #expect(!html.contains(attribute), "\(attribute)") }
            #expect(html.contains("<style>") && html.contains("<script>"))
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
        }

        @Test(arguments: [("auto", DemoSetting.auto), ("true", .on), ("false", .off), ("off", .off)])
        func theDemoSettingIsReadFromEverySource(value: String, setting: DemoSetting) throws {
            #expect(try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_DEMO": value], flags: [:]).demo == setting)
        }

        @Test func aBadDemoSettingIsRefused() {
            #expect(throws: ConfigurationLoader.Invalid.self) {
                _ = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["demo": "sometimes"])
            }
        }
    }
}
