import CheckmarkClient
import CheckmarkServer
import Foundation
import Testing

extension EndToEnd {
    /// `/metrics` is valid Prometheus text that `promtool check metrics` accepts: every family has
    /// HELP and TYPE, and the HTTP, close, auth and build series count per request and per connection.
    @Suite("Operations: metrics exposition", .serialized)
    struct MetricsExpositionTests {
        static let promtool = ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }

        /// Starts a server and gives it some of every kind of traffic the new series count.
        static func serverWithTraffic() async throws -> TestServer {
            let server = try await TestServer.start()
            try await server.setUp(users: ["alice", "bob"])
            let alice = try await server.connect("alice")
            try await alice.watch(TestServer.general)
            try await alice.sendMessage(TestServer.general, text: "hi", id: "m1")
            let bob = try await server.connect("bob")
            try await bob.markRead(TestServer.general)
            for client in [alice, bob] {
                client.close()
                _ = await client.nextEvent(ofType: ["connection.closed"])
            }
            // A connection with a foreign token: refused with 4001, counted as a bad token.
            _ = try? await server.connect("carol", token: TestServer.token("carol", secret: "another-secret-0123456789"))
            let key = "api_key=\(TestServer.apiKey)"
            #expect(try server.http("GET", "/healthz").status == 200)
            #expect(try server.http("GET", "/no/such/route").status == 404)
            #expect(try server.http("GET", "/unread?\(key)", headers: ["Authorization": TestServer.token("alice")]).status == 200)
            #expect(try server.http("GET", "/unread?api_key=wrong", headers: ["Authorization": TestServer.token("alice")]).status == 401)
            #expect(try server.http("GET", "/unread?\(key)").status == 401)
            try await Task.sleep(for: .milliseconds(200))
            return server
        }

        /// The family a sample belongs to: histogram samples drop `_bucket`, `_sum` and `_count`.
        static func family(of sample: String, histograms: Set<String>) -> String {
            let name = String(sample.prefix { $0 != "{" })
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                let base = String(name.dropLast(suffix.count))
                if histograms.contains(base) { return base }
            }
            return name
        }

        @Test func everyFamilyHasHelpAndTypeAndTheNewSeriesCount() async throws {
            let server = try await Self.serverWithTraffic()
            defer { Task { await server.stop() } }
            let text = try server.http("GET", "/metrics").body
            let samples = try #require(OperationsTests.parsePrometheus(text))
            let lines = text.split(separator: "\n")
            let helped = Set(lines.filter { $0.hasPrefix("# HELP ") }.map { String($0.split(separator: " ")[2]) })
            let typed = Dictionary(lines.filter { $0.hasPrefix("# TYPE ") }.map { ($0.split(separator: " ")[2], $0.split(separator: " ")[3]) },
                                   uniquingKeysWith: { first, _ in first }).reduce(into: [String: String]()) { $0[String($1.key)] = String($1.value) }
            let histograms = Set(typed.filter { $0.value == "histogram" }.map(\.key))
            let families = Set(samples.keys.map { Self.family(of: $0, histograms: histograms) })
            #expect(families.contains("checkmark_http_requests_total"))
            for family in families {
                #expect(helped.contains(family), "# HELP \(family)")
                #expect(typed[family] != nil, "# TYPE \(family)")
            }
            #expect(samples[#"checkmark_build_info{version="\#(BuildInfo.version)",commit="\#(BuildInfo.commit)"}"#] == 1
                || samples[#"checkmark_build_info{commit="\#(BuildInfo.commit)",version="\#(BuildInfo.version)"}"#] == 1)
            #expect(samples["checkmark_messages_sent_total"] == 1)
            #expect(samples[#"checkmark_confirmations_total{type="read"}"#] == 1)
            #expect(samples[#"checkmark_http_requests_total{route="healthz",status="200"}"#] == 1)
            #expect(samples[#"checkmark_http_requests_total{route="unmatched",status="404"}"#] == 1, "the raw path is never a label")
            #expect(samples[#"checkmark_http_requests_total{route="unreadCounts",status="200"}"#] == 1)
            #expect(samples[#"checkmark_http_requests_total{route="unreadCounts",status="401"}"#] == 2)
            #expect(samples[#"checkmark_http_requests_total{route="connect",status="101"}"#] == 3)
            #expect(samples[#"checkmark_http_request_duration_seconds_count{route="unreadCounts"}"#] == 3)
            #expect(!text.contains("/no/such/route"))
            #expect(samples[#"checkmark_websocket_closes_total{code="1000"}"#] == 2, "alice's and bob's own closes")
            #expect(samples[#"checkmark_websocket_closes_total{code="4001"}"#] == 1, "carol's refused token")
            #expect(samples[#"checkmark_websocket_closes_total{code="other"}"#] == 0)
            #expect(samples[#"checkmark_auth_failures_total{reason="token_invalid"}"#] == 1)
            #expect(samples[#"checkmark_auth_failures_total{reason="api_key"}"#] == 1)
            #expect(samples[#"checkmark_auth_failures_total{reason="token_missing"}"#] == 1)
            #expect(samples[#"checkmark_auth_failures_total{reason="token_expired"}"#] == 0)
        }

        @Test(.enabled(if: promtool != nil, "promtool is not installed (Debian package prometheus)"))
        func promtoolAcceptsTheExposition() async throws {
            let server = try await Self.serverWithTraffic()
            defer { Task { await server.stop() } }
            let text = try server.http("GET", "/metrics").body
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(Self.promtool))
            process.arguments = ["check", "metrics"]
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            input.fileHandleForWriting.write(Data(text.utf8))
            try input.fileHandleForWriting.close()
            let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "promtool check metrics: \(report)")
            #expect(report.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "no lint findings: \(report)")
        }
    }
}
