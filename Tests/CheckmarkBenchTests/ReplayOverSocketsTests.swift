import CheckmarkBench
import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import Logging
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

        let (fresh, freshConfiguration) = try await Self.startServer(recording: nil)
        let overSockets = try await RemoteReplay.run(
            lines, host: "127.0.0.1", port: fresh.port, apiKey: freshConfiguration.apiKey, apiSecret: Self.secret)
        await fresh.shutdown()
        try? FileManager.default.removeItem(atPath: freshConfiguration.dataDirectory)
        #expect(overSockets.differences == [])
        #expect(overSockets.eventsCompared == inProcess.eventsCompared)
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
