import ArgumentParser
import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import CoreMetrics
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// `checkmark bench-storage`: durable confirmations per second through the real service and SQLite
/// store (group commit, synchronous=FULL), from closed-loop clients: each sends a read confirmation
/// that moves its pointer one message on, waits for the durable acknowledgement, and sends the next.
/// Reports throughput and the receipt-to-acknowledgement latency percentiles per concurrency level.
struct BenchStorageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-storage",
        abstract: "Measure durable confirmations per second and acknowledgement latency (group commit).")

    @Option(help: "Concurrent clients, comma-separated.") var clients = "1,100,10000"
    @Option(help: "Seconds to measure each level.") var seconds = 5.0
    @Option(help: "Members per channel.") var channelSize = 100
    @Option(help: "Data directory (a fresh temporary one by default; removed afterwards).") var dataDir: String?
    @Option(help: "Measure the PostgreSQL store at this url instead (a cluster node's commit path; each level in a fresh schema, dropped afterwards).")
    var postgresUrl: String?
    @Option(help: "Cluster nodes (each its own service and store on the same schema) the clients are spread over; needs --postgres-url.")
    var nodes = 1

    func run() async throws {
        let levels = clients.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !levels.isEmpty, levels.allSatisfy({ $0 > 0 }), seconds > 0, channelSize > 0 else {
            throw ValidationError("--clients takes positive counts, --seconds and --channel-size positive numbers")
        }
        guard nodes >= 1, nodes == 1 || postgresUrl != nil else { throw ValidationError("--nodes takes a positive count, and more than 1 needs --postgres-url") }
        print("level      clients  confirmations/s   p50 ms   p99 ms  p99.9 ms   batches  mean batch")
        for level in levels {
            let directory = dataDir ?? NSTemporaryDirectory() + "checkmark-bench-" + UUID().uuidString
            defer { if dataDir == nil { try? FileManager.default.removeItem(atPath: directory) } }
            var stores: [any ReceiptsStore] = []
            var benchSchema: PostgresLocation?
            if let postgresUrl {
                let schema = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
                let location = try PostgresLocation(url: postgresUrl + (postgresUrl.contains("?") ? "&" : "?") + "schema=" + schema)
                benchSchema = location
                var logger = Logger(label: "bench")
                logger.logLevel = .error
                for _ in 0..<nodes {
                    stores.append(try await NIOThreadPool.singleton.runIfActive { [logger] in try PostgresStore(location: location, logger: logger) })
                }
            } else {
                stores = [try SQLiteStore(directory: try DataDirectory(path: directory))]
            }
            let result: Result
            do {
                result = try await Self.measure(clients: level, seconds: seconds, channelSize: channelSize, stores: stores)
            } catch {
                if let benchSchema { try? await Self.drop(benchSchema) }
                throw error
            }
            if let benchSchema { try await Self.drop(benchSchema) }
            print(String(format: "%-10@ %7d  %15.0f  %7.2f  %7.2f  %8.2f  %8d  %10.1f", "reads" as NSString, level, result.rate,
                         result.p50, result.p99, result.p999, result.batches, result.meanBatch))
            if let sqlite = stores.first as? SQLiteStore {
                let checkpoints = sqlite.checkpoints
                print("           write-ahead log checkpoints: \(checkpoints.background) in the background, \(checkpoints.atLimit) by commits at max_wal_pages")
            }
        }
    }

    /// Drops a level's throwaway schema with its rows.
    static func drop(_ schema: PostgresLocation) async throws {
        try await NIOThreadPool.singleton.runIfActive {
            try PostgresStore.dropSchema(of: schema, logger: Logger(label: "bench"))
        }
    }

    struct Result {
        var rate: Double
        var p50: Double
        var p99: Double
        var p999: Double
        var batches: Int
        var meanBatch: Double
    }

    /// With several stores, each is one node (its own service and engine loop) and client `i` confirms
    /// through node `i % nodes`.
    static func measure(clients: Int, seconds: Double, channelSize: Int, stores: [any ReceiptsStore]) async throws -> Result {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let counter = BatchCounter()
        let metrics = ServiceMetrics(factory: counter)
        let engineGroup = MultiThreadedEventLoopGroup(numberOfThreads: stores.count)
        var started: [ReceiptsService] = []
        for store in stores {
            started.append(try await ReceiptsService.start(store: store, engineLoop: engineGroup.next(), metrics: metrics, logger: logger))
        }
        let services = started
        let service = services[0]

        // Setup: users in channels of `channelSize`, each channel with enough messages from a bot that
        // every confirmation moves a pointer (a confirmation that moves nothing is not written).
        // Enough for every client to confirm at up to 200,000/s in total for the whole run.
        let messagesPerChannel = min(5_000, max(100, Int(200_000 * seconds) / clients))
        _ = try await service.submit(.upsertUser(User(id: "bot"))).get()
        let channelCount = (clients + channelSize - 1) / channelSize
        var setup: [EventLoopFuture<ReceiptsOutcome>] = []
        for index in 0..<clients { setup.append(service.submit(.upsertUser(User(id: "u\(index)")))) }
        for channel in 0..<channelCount {
            let members = (channel * channelSize..<min(clients, (channel + 1) * channelSize)).map { "u\($0)" }
            setup.append(service.submit(.createChannel(cid: ChannelCID(type: "messaging", id: "c\(channel)"), createdBy: "bot", members: members + ["bot"])))
        }
        _ = try await EventLoopFuture.whenAllSucceed(setup, on: service.engineLoop).get()
        setup = []
        for channel in 0..<channelCount {
            let cid = ChannelCID(type: "messaging", id: "c\(channel)")
            for n in 0..<messagesPerChannel {
                setup.append(service.submit(.sendMessage(cid: cid, userID: "bot", draft: MessageDraft(id: "c\(channel)-\(n)", text: "message \(n)"))))
            }
        }
        _ = try await EventLoopFuture.whenAllSucceed(setup, on: service.engineLoop).get()
        // Every node has caught up (a query waits for the journal's head).
        for node in services { _ = try await node.read { $0.users.count }.get() }
        counter.reset()

        // Closed loop per client, driven by callbacks on the engine loop.
        let recorder = LatencyRecorder()
        let loop = service.engineLoop
        let deadline = NIODeadline.now() + .nanoseconds(Int64(seconds * 1e9))
        let done = loop.makePromise(of: Void.self)
        let running = NIOLockedValueBox(clients)
        @Sendable func step(_ client: Int, _ n: Int) {
            guard NIODeadline.now() < deadline, n < messagesPerChannel else {
                if running.withLockedValue({ $0 -= 1; return $0 }) == 0 { done.succeed() }
                return
            }
            let channel = client / channelSize
            let started = NIODeadline.now()
            services[client % services.count].submit(.markRead(cid: ChannelCID(type: "messaging", id: "c\(channel)"), userID: "u\(client)", messageID: "c\(channel)-\(n)"))
                .whenComplete { _ in
                    recorder.record(NIODeadline.now() - started)
                    step(client, n + 1)
                }
        }
        let start = NIODeadline.now()
        for client in 0..<clients { loop.execute { step(client, 0) } }
        try await done.futureResult.get()
        let elapsed = Double((NIODeadline.now() - start).nanoseconds) / 1e9
        for node in services { await node.close() }
        try await engineGroup.shutdownGracefully()
        let samples = recorder.sorted()
        func percentile(_ p: Double) -> Double {
            guard !samples.isEmpty else { return 0 }
            return Double(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) / 1e6
        }
        let batches = counter.batches
        return Result(rate: Double(samples.count) / elapsed, p50: percentile(0.5), p99: percentile(0.99), p999: percentile(0.999),
                      batches: batches, meanBatch: batches > 0 ? Double(counter.entries) / Double(batches) : 0)
    }
}

/// Latency samples in nanoseconds.
final class LatencyRecorder: Sendable {
    private let samples = NIOLockedValueBox<[Int64]>([])
    func record(_ amount: TimeAmount) { samples.withLockedValue { $0.append(amount.nanoseconds) } }
    func sorted() -> [Int64] { samples.withLockedValue { $0.sorted() } }
}

/// A metrics factory that keeps only what the benchmark reports: commit batches and their sizes.
final class BatchCounter: MetricsFactory, Sendable {
    private let state = NIOLockedValueBox((batches: 0, entries: 0))
    var batches: Int { state.withLockedValue { $0.batches } }
    var entries: Int { state.withLockedValue { $0.entries } }
    func reset() { state.withLockedValue { $0 = (0, 0) } }

    private final class Handler: CounterHandler, RecorderHandler, TimerHandler, MeterHandler, Sendable {
        let owner: BatchCounter?
        init(owner: BatchCounter?) { self.owner = owner }
        func increment(by: Int64) {}
        func reset() {}
        func record(_ value: Int64) {
            owner?.state.withLockedValue { $0.batches += 1; $0.entries += Int(value) }
        }
        func record(_ value: Double) { record(Int64(value)) }
        func recordNanoseconds(_ duration: Int64) {}
        func set(_ value: Int64) {}
        func set(_ value: Double) {}
        func increment(by: Double) {}
        func decrement(by: Double) {}
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { Handler(owner: nil) }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        Handler(owner: label == "checkmark_commit_batch_size" ? self : nil)
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { Handler(owner: nil) }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { Handler(owner: nil) }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
}
