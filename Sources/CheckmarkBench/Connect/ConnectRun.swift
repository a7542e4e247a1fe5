import CheckmarkClient
import CheckmarkCore
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The `connect` scenario: opens authenticated connections as fast as the server takes them (a
/// bounded number in flight), up to each of `levels` in turn, keeps them idle, and after each level
/// measures the server's resident memory per idle connection. Connections are spread over
/// `sourceAddresses` loopback addresses (127.0.0.2, .3, ...) to get past one address's ephemeral ports.
package struct ConnectRun: Sendable {
    package let levels: [Int]
    package let sourceAddresses: Int
    package let target: BenchTarget
    package let settings: BenchSettings

    package init(levels: [Int], sourceAddresses: Int, target: BenchTarget, settings: BenchSettings) {
        self.levels = levels.sorted()
        self.sourceAddresses = sourceAddresses
        self.target = target
        self.settings = settings
    }

    package func run(parameters: [String: String]) async throws -> BenchReport {
        let top = levels.last ?? 0
        let http = target.http
        do {
            for batch in stride(from: 0, to: top, by: 500) {
                let users = (batch..<min(batch + 500, top)).map { (HarnessIDs.user($0), JSONValue.object([("id", .string(HarnessIDs.user($0)))])) }
                try await http.call("POST", "/users", body: .object([("users", .object(users))]))
            }
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: settings.harnessThreads)
        do {
            let report = try await connect(group: group, parameters: parameters)
            try? await group.shutdownGracefully()
            return report
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func connect(group: MultiThreadedEventLoopGroup, parameters: [String: String]) async throws -> BenchReport {
        if let cpus = settings.harnessCPUs { CPUAffinity.pinProcess(toCPUs: cpus) }
        let loops = Array(group.makeIterator())
        let recorders = loops.map(LoopRecorder.init(eventLoop:))
        let meter = await BenchMeter(recorders: recorders, target: target, settings: settings)
        try await Task.sleep(for: .seconds(1))
        let baseline = await target.sampler.read()?.residentBytes
        let clients = NIOLockedValueBox<[ConnectClient]>([])
        let failures = NIOLockedValueBox<[String]>([])
        var figures: [String: Double] = [:]
        var opened = 0
        var second = 0
        let clock = ContinuousClock()
        for level in levels where level > opened {
            let from = opened
            let levelStart = clock.now
            let opening = Task {
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    var next = from
                    func launch(_ index: Int) {
                        let loop = loops[index % loops.count]
                        let recorder = recorders[index % loops.count]
                        let url = target.connectURL(user: HarnessIDs.user(index))
                        let source = try? SocketAddress(ipAddress: "127.0.0.\(2 + index % max(1, sourceAddresses))", port: 0)
                        tasks.addTask {
                            let ready = loop.makePromise(of: Bool.self)
                            let settled = NIOLockedValueBox(false)
                            let settle: @Sendable (Bool) -> Void = { ok in
                                if settled.withLockedValue({ done in defer { done = true }; return !done }) { ready.succeed(ok) }
                            }
                            let started = BenchClock.now()
                            do {
                                try await WebSocketClient.connect(to: url, localAddress: sourceAddresses > 0 ? source : nil, group: loop) {
                                    let client = ConnectClient(started: started, recorder: recorder, onReady: settle)
                                    clients.withLockedValue { $0.append(client) }
                                    return client
                                }
                            } catch {
                                settle(false)
                                failures.withLockedValue { if $0.count < 10 { $0.append("\(HarnessIDs.user(index)): \(error)") } }
                            }
                            _ = try await ready.futureResult.get()
                        }
                    }
                    while next < min(from + settings.connectConcurrency, level) { launch(next); next += 1 }
                    while try await tasks.next() != nil {
                        if next < level { launch(next); next += 1 }
                    }
                }
            }
            var tickAt = clock.now
            while true {
                tickAt += .seconds(1)
                let done = await Self.finished(opening, by: tickAt, clock: clock)
                second += 1
                try await meter.tick(second: second, status: "opening to \(level)")
                if done { break }
            }
            try await opening.value
            let elapsed = clock.now - levelStart
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            figures["connects_per_second_to_\(level)"] = Double(level - from) / max(seconds, 1e-9)
            opened = level
            try await Task.sleep(for: .seconds(2))
            if let baseline, let now = await target.sampler.read()?.residentBytes {
                figures["server_bytes_per_idle_connection_at_\(level)"] = Double(now - baseline) / Double(level)
                figures["server_resident_mib_at_\(level)"] = Double(now) / 1_048_576
            }
        }
        meter.finish()
        for client in clients.withLockedValue({ $0 }) { client.recorder.eventLoop.execute { client.close() } }
        try await Task.sleep(for: .milliseconds(500))
        return meter.report(scenario: "connect", parameters: parameters, figures: figures, errors: failures.withLockedValue { $0 })
    }

    /// Waits until `deadline`; true if the task finished by then.
    private static func finished(_ task: Task<Void, any Error>, by deadline: ContinuousClock.Instant, clock: ContinuousClock) async -> Bool {
        let done = NIOLockedValueBox(false)
        let watcher = Task {
            _ = try? await task.value
            done.withLockedValue { $0 = true }
        }
        try? await Task.sleep(until: deadline, clock: clock)
        _ = watcher
        return done.withLockedValue { $0 }
    }
}
