import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
import CheckmarkServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Re-runs a recorded trace against a running server over real sockets (`checkmark replay run --url`):
/// one WebSocket client per recorded connection (connect, watch, stop watching, close), every other
/// command through the REST API with a server token, one at a time, each waiting for its answer. The
/// server must be fresh (no users, channels or messages), so that generated ids and channel
/// sequences come out as recorded. Then compares what every client received with the recording.
package enum RemoteReplay {
    package static func run(
        _ lines: [TraceLine], host: String, port: Int, apiKey: String, apiSecret: String, speed: Double? = nil,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, progress: (Int, Int) -> Void = { _, _ in }
    ) async throws -> ReplayReport {
        let plan = try ReplayPlan(lines)
        let http = BenchHTTPClient(host: host, port: port, apiKey: apiKey, apiSecret: apiSecret)
        var report = ReplayReport()
        var clients: [String: Collector] = [:]
        let started = Date()
        for (index, entry) in plan.commands.enumerated() {
            if let gap = plan.pause(before: index, speed: speed) { try await Task.sleep(for: .seconds(gap)) }
            do {
                switch entry.command {
                case .connect(let connectionID, let userID):
                    let connection = try await ChatConnection.connect(
                        host: host, port: port, apiKey: apiKey, userID: userID,
                        token: JWT.sign(claims: .object([("user_id", .string(userID))]), secret: apiSecret), group: group)
                    clients[connectionID] = Collector(connection)
                case .disconnect(let connectionID):
                    guard let client = clients[connectionID] else { break }
                    // Its last events may still be on the way: they reached it when recorded, so wait for them.
                    try await client.waitFor(count: plan.expectedCount(connectionID), seconds: 2)
                    await client.close()
                    // Later commands must find the connection gone, as they did when recorded.
                    let open = clients.values.filter { !$0.isClosed }.count
                    try await waitForConnectionCount(open, http: http)
                case .watch(let connectionID, let cid):
                    try await clients[connectionID]?.connection.watch(cid)
                case .stopWatching(let connectionID, let cid):
                    try await clients[connectionID]?.connection.stopWatching(cid)
                case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers, .removeMembers,
                     .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered:
                    guard let (method, path, body) = RESTForm.request(for: entry.command) else { break }
                    try await http.call(method, path, body: body)
                }
            } catch {
                report.differences.append("command \(entry.seq) (\(CommandCodec.op(entry.command))) was refused in the replay: \(error)")
            }
            report.commands += 1
            progress(index + 1, plan.commands.count)
        }
        // Let the last events arrive: until every client has what it should, or nothing came for a while.
        var quietSince = Date()
        var lastTotal = -1
        while Date().timeIntervalSince(quietSince) < 2 {
            let total = clients.values.reduce(0) { $0 + $1.count }
            if clients.allSatisfy({ $0.value.count >= plan.expectedCount($0.key) }) { break }
            if total != lastTotal {
                lastTotal = total
                quietSince = Date()
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        for client in clients.values where !client.isClosed { await client.close() }
        plan.compare(received: clients.mapValues { $0.events }, into: &report)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Polls the server's `checkmark_connections` gauge until it shows `count` (at most 5 s).
    static func waitForConnectionCount(_ count: Int, http: BenchHTTPClient) async throws {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let value = await http.metrics()["checkmark_connections"], Int(value) <= count { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchHTTPClient.Failure(description: "the server still counts more than \(count) connections after a close")
    }

    /// One client connection and the trace events it received, gathered as they arrive.
    final class Collector: Sendable {
        let connection: ChatConnection
        private let received = NIOLockedValueBox<(events: [JSONValue], closed: Bool)>(([], false))
        private let reader: Task<Void, Never>

        init(_ connection: ChatConnection) {
            self.connection = connection
            let box = received
            reader = Task {
                while true {
                    guard let event = await connection.nextEvent(timeout: .seconds(3600)) else { continue }
                    switch event {
                    case .closed:
                        box.withLockedValue { $0.closed = true }
                        return
                    case .event(let type, let json):
                        // Events of the engine only: not the connection's own health checks, replies or markers.
                        guard !["health.check", "reply", "error", "channel.resumed", "channel.resume_failed"].contains(type) else { continue }
                        box.withLockedValue { $0.events.append(ReplayPlan.normalised(json)) }
                    }
                }
            }
        }

        var events: [JSONValue] { received.withLockedValue { $0.events } }
        var count: Int { received.withLockedValue { $0.events.count } }
        var isClosed: Bool { received.withLockedValue { $0.closed } }

        /// Waits until `count` events arrived, or `seconds` passed.
        func waitFor(count: Int, seconds: Double) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while self.count < count && Date() < deadline { try await Task.sleep(for: .milliseconds(2)) }
        }

        func close() async {
            connection.close()
            await reader.value
        }
    }
}
