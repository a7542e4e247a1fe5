import CheckmarkAuth
import CheckmarkBench
import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

/// A trace recorded from a harness run re-runs with zero differences, in process and against a
/// fresh server over real sockets (one WebSocket client per recorded connection, REST for the rest).
@Suite("Replay of a recorded load run", .serialized)
struct ReplayOverSocketsTests {
    static let secret = "replay-test-secret-0123456789"

    static func startServer(recording trace: String?) async throws -> (ReceiptsServer, ServerConfiguration) {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = NSTemporaryDirectory() + "checkmark-replay-test-" + UUID().uuidString
        configuration.apiSecret = secret
        configuration.gateway.commandsPerSecond = 100_000
        configuration.gateway.commandBurst = 100_000
        configuration.recordPath = trace
        var logger = Logger(label: "replay-test")
        logger.logLevel = .error
        return (try await ReceiptsServer.start(configuration, group: MultiThreadedEventLoopGroup.singleton, logger: logger), configuration)
    }

    /// `lines` replayed over sockets against a fresh server of its own, stopped and removed after.
    static func replayOnAFreshServer(_ lines: [TraceLine]) async throws -> ReplayReport {
        let (fresh, configuration) = try await startServer(recording: nil)
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let report = try await RemoteReplay.run(lines, host: "127.0.0.1", port: fresh.port, apiKey: configuration.apiKey, apiSecret: secret)
        await fresh.shutdown()
        return report
    }

    @Test func recordedMixedRunReplaysWithZeroDifferencesInProcessAndOverSockets() async throws {
        let trace = NSTemporaryDirectory() + "checkmark-mixed-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let (recorded, recordedConfiguration) = try await Self.startServer(recording: trace)
        let target = BenchTarget(host: "127.0.0.1", port: recorded.port, apiKey: recordedConfiguration.apiKey,
                                 apiSecret: Self.secret, local: nil, serverPID: nil)
        var settings = BenchSettings(reportDirectory: NSTemporaryDirectory() + "replay-test-report", command: "test")
        settings.warmupSeconds = 0
        settings.durationSeconds = 1
        settings.harnessThreads = 2
        _ = try await LoadRun(workload: LoadScenario.mixed(users: 30, rate: 20, payloadBytes: 40, seed: 7), target: target, settings: settings)
            .run(scenario: "mixed", parameters: [:])
        await recorded.shutdown()
        try? FileManager.default.removeItem(atPath: recordedConfiguration.dataDirectory)

        let lines = try TraceFile.lines(atPath: trace)
        let inProcess = try await ReplayRunner.run(lines)
        #expect(inProcess.differences == [] && inProcess.privacyViolations == [])
        #expect(inProcess.connections >= 30 && inProcess.eventsCompared > 100)

        let overSockets = try await Self.replayOnAFreshServer(lines)
        #expect(overSockets.differences == [])
        #expect(overSockets.eventsCompared == inProcess.eventsCompared)
    }

    /// Edits and deletes (rules M1-M6) and reactions (R1-R5) replay over Stream's REST routes: `POST
    /// /messages/{id}` for an edit, `DELETE /messages/{id}` with `hard` and `deleted_by` for a delete,
    /// `POST /messages/{id}/reaction` and `DELETE /messages/{id}/reaction/{type}?user_id=`.
    @Test func editsAndDeletesReplayOverRESTWithZeroDifferences() async throws {
        let trace = NSTemporaryDirectory() + "checkmark-edits-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let (recorded, configuration) = try await Self.startServer(recording: trace)
        let cid = ChannelCID(type: "messaging", id: "edits")
        for user in ["ann", "ben"] { _ = try await recorded.service.submit(.upsertUser(User(id: user))).get() }
        _ = try await recorded.service.submit(.createChannel(cid: cid, createdBy: "ann", members: ["ann", "ben"])).get()
        var connections: [ChatConnection] = []
        for user in ["ann", "ben"] {
            let connection = try await ChatConnection.connect(
                host: "127.0.0.1", port: recorded.port, apiKey: configuration.apiKey, userID: user,
                token: JWT.sign(claims: .object([("user_id", .string(user))]), secret: Self.secret))
            _ = try await connection.watch(cid)
            connections.append(connection)
        }
        for i in 1...3 { _ = try await connections[0].sendMessage(cid, text: "text \(i)", id: "m/\(i)") }
        for command: ReceiptsCommand in [
            .updateMessage(cid: cid, messageID: "m/1", text: "edited ✓", by: "ann"),
            .updateMessage(cid: cid, messageID: "m/2", text: "by the server", by: nil),
            .deleteMessage(cid: cid, messageID: "m/2", hard: false, by: "ann"),
            .deleteMessage(cid: cid, messageID: "m/3", hard: true, by: nil),
            .sendReaction(cid: cid, messageID: "m/1", userID: "ben", type: "thumbs up", score: 2, enforceUnique: false),
            .sendReaction(cid: cid, messageID: "m/1", userID: "ben", type: "love", score: 1, enforceUnique: true),
            .deleteReaction(cid: cid, messageID: "m/1", userID: "ben", type: "love"),
        ] {
            _ = try await recorded.service.submit(command).get()
        }
        for connection in connections { _ = await connection.nextEvent(timeout: .milliseconds(300)); connection.close() }
        await recorded.shutdown()
        try? FileManager.default.removeItem(atPath: configuration.dataDirectory)

        let lines = try TraceFile.lines(atPath: trace)
        let inProcess = try await ReplayRunner.run(lines)
        #expect(inProcess.differences == [])
        let overSockets = try await Self.replayOnAFreshServer(lines)
        #expect(overSockets.differences == [])
        #expect(overSockets.eventsCompared == inProcess.eventsCompared && inProcess.eventsCompared >= 20, "3 message.new, 2 message.updated, 2 message.deleted and 3 reaction events, to 2 watchers")
    }
}

/// `checkmark replay record`: the live trace of a running server over `/admin/trace`.
@Suite("Live trace of a running server", .serialized)
struct LiveTraceTests {
    @Test func recorderAttachedToARunningServerGetsEveryCommandFromThenOn() async throws {
        let (server, configuration) = try await ReplayOverSocketsTests.startServer(recording: nil)
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let http = BenchHTTPClient(host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: ReplayOverSocketsTests.secret)
        try await http.call("POST", "/users", body: .object([("users", .object([("early", .object([]))]))]))
        let trace = NSTemporaryDirectory() + "checkmark-live-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        let (readyStream, readyContinuation) = AsyncStream.makeStream(of: Void.self)
        let recording = Task {
            try await LiveTraceRecorder.record(
                host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: ReplayOverSocketsTests.secret,
                to: trace, seconds: 1.5, ready: { readyContinuation.yield() })
        }
        for await _ in readyStream { break }
        try await http.call("POST", "/users", body: .object([("users", .object([("alice", .object([])), ("bob", .object([]))]))]))
        try await http.call("POST", "/channels/messaging/live/query", body: .object([("data", .object([("members", .array([.string("alice"), .string("bob")]))]))]))
        try await http.call("POST", "/channels/messaging/live/message", body: .object([("message", .object([("text", .string("hi")), ("user_id", .string("alice"))]))]))
        try await http.call("POST", "/channels/messaging/live/read", body: .object([("user_id", .string("bob"))]))
        let result = try await recording.value
        await server.shutdown()

        let lines = try TraceFile.lines(atPath: trace)
        #expect(result.lines == lines.count && result.startedAt != nil && result.closeCode == nil)
        let ops = lines.compactMap { line -> String? in
            guard case .command(_, _, let command) = line else { return nil }
            return CommandCodec.op(command)
        }
        #expect(ops == ["upsert_user", "upsert_user", "create_channel", "send_message", "mark_read"], "from the attach on, not before")
        let read = TraceFilter(user: "bob", types: ["message.read"]).apply(lines)
        #expect(read.count == 2)
    }

    @Test func liveTraceNeedsAServerToken() async throws {
        let (server, configuration) = try await ReplayOverSocketsTests.startServer(recording: nil)
        defer { try? FileManager.default.removeItem(atPath: configuration.dataDirectory) }
        let trace = NSTemporaryDirectory() + "checkmark-refused-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: trace) }
        await #expect {
            _ = try await LiveTraceRecorder.record(
                host: "127.0.0.1", port: server.port, apiKey: configuration.apiKey, apiSecret: "not-the-secret-0123456789",
                to: trace, seconds: 1)
        } throws: { error in
            guard case .handshakeFailed(let status, _, let body)? = error as? WebSocketClientError else { return false }
            return status == 401 && body.contains("signature")
        }
        await server.shutdown()
    }
}
