import CheckmarkClient
import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Executes a ``Workload`` against a target: sets users and channels up over REST, connects every
/// client (each watching its channels), runs publishers and confirmations for the warm-up and the
/// measured seconds, then closes everything and reports.
package struct LoadRun: Sendable {
    package let workload: Workload
    package let target: BenchTarget
    package let settings: BenchSettings

    package init(workload: Workload, target: BenchTarget, settings: BenchSettings) {
        self.workload = workload
        self.target = target
        self.settings = settings
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// A prefix that keeps this run's channels apart from earlier runs on the same server.
    static func runPrefix() -> String { "b" + String(UInt32.random(in: 0...UInt32.max), radix: 36) }

    package func run(scenario: String, parameters: [String: String]) async throws -> BenchReport {
        let prefix = Self.runPrefix()
        let cids = workload.channels.indices.map { "\(workload.channelType):\(prefix)-\($0)" }
        try await setUp(cids: cids)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: settings.harnessThreads)
        do {
            let report = try await load(group: group, cids: cids, scenario: scenario, parameters: parameters)
            try? await group.shutdownGracefully()
            return report
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func load(group: MultiThreadedEventLoopGroup, cids: [String], scenario: String, parameters: [String: String]) async throws -> BenchReport {
        let loops = Array(group.makeIterator())
        let recorders = loops.map(LoopRecorder.init(eventLoop:))
        let shared = LoadShared(workload: workload)
        let membership = workload.membership()

        // Connect: users in order, then the slow extra connections of user 0.
        let plan: [(user: Int, slow: Bool)] = (0..<workload.users).map { ($0, false) } + (0..<workload.slowConsumers).map { _ in (0, true) }
        let clients = NIOLockedValueBox<[Int: LoadClient]>([:])
        let compression: PerMessageDeflateConfiguration = settings.compression ? .init() : .disabled
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            var next = 0
            func launch(_ index: Int) {
                let (user, slow) = plan[index]
                let loop = loops[index % loops.count]
                let recorder = recorders[index % loops.count]
                let channels = membership[user].map { cids[$0] }
                tasks.addTask {
                    let box = NIOLockedValueBox<LoadClient?>(nil)
                    try await WebSocketClient.connect(to: target.connectURL(user: HarnessIDs.user(user)), compression: compression, group: loop) {
                        let client = LoadClient(user: user, channels: channels, recorder: recorder, shared: shared, slow: slow)
                        box.withLockedValue { $0 = client }
                        return client
                    }
                    guard let client = box.withLockedValue({ $0 }) else { throw Failure(description: "connection \(index) did not open") }
                    clients.withLockedValue { $0[index] = client }
                    loop.execute { client.watchChannels() }
                }
            }
            while next < min(settings.connectConcurrency, plan.count) { launch(next); next += 1 }
            while try await tasks.next() != nil {
                if next < plan.count { launch(next); next += 1 }
            }
        }
        let all = clients.withLockedValue { $0 }.sorted { $0.key < $1.key }.map(\.value)
        let deadline = Date().addingTimeInterval(120)
        while shared.readyClients < plan.count {
            guard Date() < deadline else { throw Failure(description: "only \(shared.readyClients) of \(plan.count) clients finished watching; errors: \(shared.errors)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = try await LoopRecorder.collect(recorders)  // setup traffic is not measured

        // Load.
        let start = BenchClock.now() + 50_000_000
        let publishers = workload.publishers.sorted { $0.key < $1.key }
        var tickers: [RepeatedTask] = []
        if workload.messageRate > 0, !publishers.isEmpty {
            let interval = UInt64(Double(publishers.count) / workload.messageRate * 1e9)
            for (offset, (user, channels)) in publishers.enumerated() {
                let client = all[user]
                let phase = interval / UInt64(publishers.count) * UInt64(offset)
                let targets = channels.map { cids[$0] }
                client.recorder.eventLoop.execute {
                    client.startPublishing(to: targets, interval: max(interval, 1), start: start + phase, payloadBytes: workload.payloadBytes)
                }
            }
            // One ticker per event loop (every millisecond) sends what is due from that loop's publishers.
            for loop in loops {
                let local = publishers.map { all[$0.key] }.filter { $0.recorder.eventLoop === loop }
                guard !local.isEmpty else { continue }
                tickers.append(loop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in
                    let now = BenchClock.now()
                    for client in local { client.publishDue(now: now) }
                })
            }
        }
        if let confirm = workload.confirmations {
            let interval = TimeAmount.nanoseconds(Int64(confirm.intervalSeconds * 1e9))
            for client in all where !client.slow {
                let phase = TimeAmount.nanoseconds(Int64.random(in: 0...interval.nanoseconds))
                client.recorder.eventLoop.execute { client.startConfirming(every: interval, phase: phase) }
            }
        }

        let meter = await BenchMeter(recorders: recorders, target: target, settings: settings)
        let total = settings.warmupSeconds + settings.durationSeconds
        let clock = ContinuousClock()
        var tickAt = clock.now
        var firstSlowDisconnect: Int?
        for second in 1...total {
            tickAt += .seconds(1)
            try await Task.sleep(until: tickAt, clock: clock)
            try await meter.tick(second: second, status: "\(plan.count - shared.slowDisconnects) conns")
            if workload.slowConsumers > 0, firstSlowDisconnect == nil,
               (await target.http.metrics()["checkmark_slow_consumer_disconnects_total"] ?? 0) > 0 {
                firstSlowDisconnect = second - settings.warmupSeconds
            }
        }
        meter.finish()

        for ticker in tickers { ticker.cancel() }
        shared.beginClosing()
        for client in all { client.recorder.eventLoop.execute { client.close() } }
        try await Task.sleep(for: .milliseconds(300))

        var figures: [String: Double] = ["mean_fan_out": workload.meanFanOut]
        // A consumer that does not read cannot see its own close frame: the server's count tells.
        let serverSlow = await target.http.metrics()["checkmark_slow_consumer_disconnects_total"]
        if workload.slowConsumers > 0 {
            figures["server_slow_consumer_disconnects_4009"] = serverSlow ?? -1
            if let firstSlowDisconnect { figures["first_slow_consumer_disconnect_at_second"] = Double(firstSlowDisconnect) }
        }
        var report = meter.report(scenario: scenario, parameters: parameters, figures: figures, errors: shared.errors)
        if workload.slowConsumers > 0, Int(serverSlow ?? 0) < workload.slowConsumers {
            report.warnings.append("the server disconnected \(Int(serverSlow ?? 0)) of \(workload.slowConsumers) slow consumer(s) within the run (raise the duration or lower max_outbound_buffer)")
        }
        return report
    }

    /// Users (with privacy settings), the channel type, and the channels with their members, over REST.
    private func setUp(cids: [String]) async throws {
        let http = target.http
        let workload = self.workload
        do {
            for batch in stride(from: 0, to: workload.users, by: 500) {
                let users = (batch..<min(batch + 500, workload.users)).map { index -> (String, JSONValue) in
                    var fields: [(String, JSONValue)] = [("id", .string(HarnessIDs.user(index)))]
                    if workload.privacyOff.contains(index) {
                        fields.append(("privacy_settings", .object([("read_receipts", .object([("enabled", .bool(false))])),
                                                                     ("delivery_receipts", .object([("enabled", .bool(false))]))])))
                    }
                    return (HarnessIDs.user(index), .object(fields))
                }
                try await http.call("POST", "/users", body: .object([("users", .object(users))]))
            }
            if workload.channelType != "messaging" {
                do {
                    try await http.call("POST", "/channeltypes", body: .object([
                        ("name", .string(workload.channelType)), ("delivery_events", .bool(workload.deliveryEvents))]))
                } catch let failure as BenchHTTPClient.Failure where failure.description.contains("HTTP 409") {
                    try await http.call("PUT", "/channeltypes/\(workload.channelType)", body: .object([("delivery_events", .bool(workload.deliveryEvents))]))
                }
            }
            for (index, members) in workload.channels.enumerated() {
                let parts = cids[index].split(separator: ":")
                try await http.call("POST", "/channels/\(parts[0])/\(parts[1])/query", body: .object([
                    ("data", .object([("members", .array(members.map { .string(HarnessIDs.user($0)) })),
                                      ("created_by_id", .string(HarnessIDs.user(members.first ?? 0)))]))]))
            }
        }
    }
}
