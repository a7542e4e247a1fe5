import CheckmarkCore
import CheckmarkStorage
import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Re-runs a recorded trace against a fresh in-process server core (the receipts service over a new
/// SQLite store in a temporary directory), with one receiving connection per recorded connection,
/// and compares what every connection receives with what the trace says it received. Times are
/// normalised (every RFC 3339 string compares equal to every other); connection ids are the
/// recorded ones, and generated message ids come out the same because the history is the same.
public enum ReplayRunner {
    /// Why a trace cannot be run.
    public struct Unrunnable: Error, CustomStringConvertible {
        public var description: String
    }

    /// - Parameters:
    ///   - speed: nil re-runs as fast as the server allows; otherwise at the recorded pace times this
    ///     factor (2 is twice as fast).
    ///   - alteration: changes every outcome before it is stored and sent (for tests that prove the
    ///     diff catches a build whose rules differ).
    ///   - progress: called with (commands done, commands in all).
    /// - Throws: ``Unrunnable`` for a trace without recipients (exported from a journal) or storage
    ///   errors of the temporary store.
    public static func run(
        _ lines: [TraceLine], speed: Double? = nil, alteration: (@Sendable (inout ReceiptsOutcome) -> Void)? = nil,
        progress: (Int, Int) -> Void = { _, _ in }
    ) async throws -> ReplayReport {
        var expected: [String: [[UInt8]]] = [:]
        var users: [String: String] = [:]
        var commands: [(seq: Int64, at: Timestamp, command: ReceiptsCommand)] = []
        for line in lines {
            switch line {
            case .command(let seq, let at, let command):
                commands.append((seq, at, command))
                if case .connect(let connectionID, let userID) = command { users[connectionID] = userID }
            case .event(let event):
                guard let recipients = event.recipients else {
                    throw Unrunnable(description: "event of command \(event.commandSeq) has no recipients: run takes a trace recorded live (checkmark serve --record), not one exported from a journal")
                }
                for recipient in recipients { expected[recipient.connectionID, default: []].append(event.json(for: recipient.counts)) }
            }
        }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkmark-replay-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(directory: try DataDirectory(path: directory))
        let engineGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sinkGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var logger = Logger(label: "checkmark-replay")
        logger.logLevel = .error
        let service = try await ReceiptsService.start(
            store: store, engineLoop: engineGroup.next(), metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), logger: logger,
            alteration: alteration)
        var report = ReplayReport()
        var sinks: [String: ReplaySink] = [:]
        var privacy = PrivacyOracle()
        let started = Date()
        let sinkLoop = sinkGroup.next()
        for (index, entry) in commands.enumerated() {
            if let speed, speed > 0, index > 0 {
                let gap = Double(entry.at.rawValue - commands[index - 1].at.rawValue) / 1e6 / speed
                if gap > 0 { try await Task.sleep(for: .seconds(gap)) }
            }
            var sink: ReplaySink?
            if case .connect(let connectionID, _) = entry.command {
                sink = ReplaySink(connectionID: connectionID, eventLoop: sinkLoop)
                sinks[connectionID] = sink
            }
            privacy.apply(entry.command)
            do {
                let outcome = try await service.submit(entry.command, sink: sink).get()
                report.privacyViolations += privacy.violations(in: outcome.events, command: entry.seq)
            } catch {
                report.differences.append("command \(entry.seq) (\(Self.op(entry.command))) was refused in the replay: \(error)")
            }
            report.commands += 1
            progress(index + 1, commands.count)
        }
        // Every event is released once the last command's batch is durable; then its hop to the sinks' loop.
        _ = try await service.read { _ in 0 }.get()
        try await sinkLoop.submit {}.get()
        await service.close()
        try? await engineGroup.shutdownGracefully()
        try? await sinkGroup.shutdownGracefully()

        for connectionID in Set(expected.keys).union(sinks.keys).sorted() {
            let want = expected[connectionID] ?? []
            let got = sinks[connectionID]?.events ?? []
            report.connections += 1
            report.eventsCompared += max(want.count, got.count)
            if let difference = Self.difference(want, got, connection: connectionID, user: users[connectionID]) {
                report.differences.append(difference)
            }
        }
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// The first difference between what a connection should have received and what it did, in words.
    static func difference(_ want: [[UInt8]], _ got: [[UInt8]], connection: String, user: String?) -> String? {
        let who = "connection \(connection) (\(user ?? "unknown user"))"
        for index in 0..<max(want.count, got.count) {
            let expected = index < want.count ? normalised(want[index]) : nil
            let actual = index < got.count ? normalised(got[index]) : nil
            if expected == actual { continue }
            let wantText = expected.map(Self.text) ?? "nothing"
            let gotText = actual.map(Self.text) ?? "nothing"
            return "\(who), event \(index + 1) of \(want.count) recorded (\(got.count) replayed):\n  - recorded: \(wantText)\n  + replayed: \(gotText)"
        }
        return nil
    }

    /// The event with every RFC 3339 time replaced by `<time>`.
    static func normalised(_ bytes: [UInt8]) -> JSONValue {
        guard let value = try? JSONParser.parse(bytes) else { return .string(String(decoding: bytes, as: UTF8.self)) }
        func walk(_ value: JSONValue) -> JSONValue {
            switch value {
            case .string(let text) where Timestamp(rfc3339: text) != nil: .string("<time>")
            case .array(let items): .array(items.map(walk))
            case .object(let fields): .object(fields.map { ($0.0, walk($0.1)) })
            default: value
            }
        }
        return walk(value)
    }

    static func text(_ value: JSONValue) -> String {
        var w = JSONWriter()
        w.value(value)
        let text = String(decoding: w.bytes, as: UTF8.self)
        return text.count > 400 ? String(text.prefix(400)) + "..." : text
    }

    static func op(_ command: ReceiptsCommand) -> String {
        (try? JSONParser.parse(CommandCodec.encode(command)))?["op"]?.stringValue ?? "command"
    }
}
