import CheckmarkCore
import CheckmarkServer
import Foundation
import Logging
import NIOCore
import NIOConcurrencyHelpers
import NIOPosix
import Testing

/// `log_format = json` writes one parseable object a line with the fixed fields and the metadata;
/// every REST request gets a request id, echoed in `X-Request-Id` and in its one access log line.
@Suite("Logging", .serialized)
struct LoggingTests {
    /// The lines a handler wrote.
    final class Lines: Sendable {
        private let box = NIOLockedValueBox<[String]>([])
        var all: [String] { box.withLockedValue { $0 } }
        func append(_ line: String) { box.withLockedValue { $0.append(line) } }
        /// Every line parsed as a JSON object (nil for a line that is not one).
        var objects: [[String: Any]?] { all.map { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] } }
    }

    static func logger(_ lines: Lines) -> Logger {
        var logger = Logger(label: "checkmark") { label in JSONLogHandler(label: label, write: { lines.append($0) }) }
        logger.logLevel = .info
        return logger
    }

    @Test func jsonLinesParseAndCarryTheFixedFieldsAndTheMetadata() throws {
        let lines = Lines()
        var logger = Self.logger(lines)
        logger[metadataKey: "node"] = "a"
        logger.info("hello \"world\"\n", metadata: ["user_id": "alice", "level": "shadowed", "ids": ["1", "2"]])
        logger.debug("below the level")
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("\n") && line.dropLast().contains("\n") == false, "one line")
        let object = try #require(lines.objects.first ?? nil)
        #expect(object["level"] as? String == "info")
        #expect(object["label"] as? String == "checkmark")
        #expect(object["message"] as? String == "hello \"world\"\n")
        #expect(object["user_id"] as? String == "alice")
        #expect(object["node"] as? String == "a")
        #expect(object["meta_level"] as? String == "shadowed")
        #expect(object["ids"] as? [String] == ["1", "2"])
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "RFC 3339 with milliseconds: \(time)")
    }

    /// One raw HTTP/1.1 request; the status, the headers (lower-cased names) and the body.
    static func request(port: Int, _ path: String, headers: [String: String] = [:]) throws -> (status: Int, headers: [String: String], body: String) {
        let socket = try RawSocket(port: port)
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        socket.send(text + "\r\n")
        let response = String(decoding: socket.readAll(), as: UTF8.self)
        let parts = response.components(separatedBy: "\r\n\r\n")
        let head = parts[0].components(separatedBy: "\r\n")
        var fields: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (Int(head[0].split(separator: " ")[1]) ?? 0, fields, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func everyRESTRequestHasOneAccessLineWithTheRequestIDOfItsResponse() async throws {
        let lines = Lines()
        let test = try await TestServer.start(logger: Self.logger(lines))
        defer { Task { await test.stop() } }
        let server = test.server
        _ = try await server.service.submit(.upsertUser(User(id: "alice"))).get()
        let given = try Self.request(port: server.port, "/unread?api_key=\(TestServer.apiKey)",
                                     headers: ["Authorization": TestServer.token("alice"), "X-Request-Id": "trace-7.a:b"])
        #expect(given.headers["x-request-id"] == "trace-7.a:b", "a sane client id is kept")
        let refused = try Self.request(port: server.port, "/unread?api_key=wrong", headers: ["X-Request-Id": "not sane!"])
        #expect(refused.status == 401)
        let made = try #require(refused.headers["x-request-id"])
        #expect(made != "not sane!" && made.count == 16, "an insane id is replaced: \(made)")
        let health = try Self.request(port: server.port, "/healthz")
        let healthID = try #require(health.headers["x-request-id"])
        try await Task.sleep(for: .milliseconds(100))

        let objects = lines.objects
        #expect(objects.allSatisfy { $0 != nil }, "every line is JSON: \(lines.all)")
        let access = objects.compactMap { $0 }.filter { $0["message"] as? String == "request" }
        #expect(access.count == 3, "one access line per request: \(access)")
        for id in ["trace-7.a:b", made, healthID] {
            #expect(access.filter { $0["request_id"] as? String == id }.count == 1, "one access line for \(id)")
        }
        let first = try #require(access.first { $0["request_id"] as? String == "trace-7.a:b" })
        #expect(first["method"] as? String == "GET")
        #expect(first["route"] as? String == "unreadCounts")
        #expect(first["status"] as? String == "200")
        #expect(first["caller"] as? String == "alice")
        #expect(Double(first["duration_ms"] as? String ?? "") != nil)
        #expect(Int(first["bytes"] as? String ?? "") ?? 0 > 0)
        #expect((first["peer"] as? String ?? "-").contains("127.0.0.1"))
        let refusal = objects.compactMap { $0 }.filter { ($0["message"] as? String ?? "").hasPrefix("refused:") }
        #expect(refusal.count == 1)
        #expect(refusal.first?["request_id"] as? String == made, "the refusal names its request")
    }

    @Test func accessLogOffWritesNoRequestLines() async throws {
        let lines = Lines()
        let server = try await TestServer.start(logger: Self.logger(lines)) { $0.accessLog = false }
        let response = try Self.request(port: server.port, "/healthz", headers: ["X-Request-Id": "r1"])
        #expect(response.headers["x-request-id"] == "r1")
        await server.stop()
        #expect(!lines.objects.compactMap { $0 }.contains { $0["message"] as? String == "request" })
    }
}
