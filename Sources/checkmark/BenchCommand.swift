import ArgumentParser
import CheckmarkBench
import Foundation

/// `checkmark bench`: receipt-shaped load against a server (or a local one it starts), with live
/// progress, a final table, and JSON and HTML reports. See BENCHMARKS.md.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load a Checkmark server with chat-shaped traffic and report rates and latencies.",
        subcommands: [Broadcast.self, Receipts.self, Connect.self, Mixed.self])

    struct Broadcast: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publishers send message.new to channels every connection watches; deliveries/s and send-to-receive latency.")
        @OptionGroup var options: BenchOptions
        @Option(help: "Connections (one user each).") var connections = 1000
        @Option(help: "Channels.") var channels = 1
        @Option(help: "Members per channel (default: every connection).") var members: Int?
        @Flag(help: "Zipf-sized channels: channel k has about connections/(k+1) members.") var zipf = false
        @Option(help: "Messages per second, all publishers together.") var rate = 1000.0
        @Option(help: "Message text size in bytes.") var payload = 100
        @Option(help: "Extra connections of one member that stop reading (backpressure; expect close 4009).") var slowConsumers = 0

        func validate() throws {
            guard connections > 0, channels > 0, rate > 0, payload >= 0, slowConsumers >= 0 else {
                throw ValidationError("counts and the rate must be positive")
            }
        }

        func run() async throws {
            let (target, settings) = try options.prepare(scenario: "broadcast")
            let workload = LoadScenario.broadcast(connections: connections, channels: channels,
                                                  membersPerChannel: zipf ? nil : (members ?? connections), rate: rate,
                                                  payloadBytes: payload, slowConsumers: slowConsumers)
            var parameters = options.parameters
            parameters.merge(["connections": "\(connections)", "channels": "\(channels)", "members": zipf ? "zipf" : "\(members ?? connections)",
                              "rate_per_s": "\(rate)", "payload_bytes": "\(payload)", "slow_consumers": "\(slowConsumers)"]) { $1 }
            try await options.runLoad(workload, scenario: "broadcast", parameters: parameters, target: target, settings: settings)
        }
    }

    struct Receipts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A group channel whose members all confirm delivery (batched) and then read; confirmations/s and time to the author's checks.")
        @OptionGroup var options: BenchOptions
        @Option(help: "Members of the group channel, all connected.") var members = 100
        @Option(help: "Messages per second, members taking turns.") var rate = 100.0
        @Option(help: "Seconds between a client's confirmation rounds.") var confirmInterval = 1.0
        @Option(help: "Message text size in bytes.") var payload = 100

        func validate() throws {
            guard members >= 2, rate > 0, confirmInterval > 0, payload >= 0 else { throw ValidationError("need at least 2 members and positive rates") }
        }

        func run() async throws {
            let (target, settings) = try options.prepare(scenario: "receipts")
            let workload = LoadScenario.receipts(members: members, rate: rate, confirmInterval: confirmInterval, payloadBytes: payload)
            var parameters = options.parameters
            parameters.merge(["members": "\(members)", "rate_per_s": "\(rate)", "confirm_interval_s": "\(confirmInterval)",
                              "payload_bytes": "\(payload)"]) { $1 }
            try await options.runLoad(workload, scenario: "receipts", parameters: parameters, target: target, settings: settings)
        }
    }

    struct Connect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Authenticated connections per second, and server memory per idle connection at each level.")
        @OptionGroup var options: BenchOptions
        @Option(help: "Connection counts to reach in turn, comma-separated.") var levels = "1000,10000"
        @Option(help: "Connections opening at once.") var concurrency = 256
        @Option(help: "Loopback source addresses to spread connections over (127.0.0.2, ...; 0: the default address).")
        var sourceAddresses = 0

        func run() async throws {
            let counts = levels.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }), concurrency > 0, sourceAddresses >= 0 else {
                throw ValidationError("--levels takes positive counts; --concurrency must be positive")
            }
            let limit = FileLimit.raiseToHard()
            var (target, settings) = try options.prepare(scenario: "connect")
            settings.warmupSeconds = 0
            settings.connectConcurrency = concurrency
            let reachable = counts.filter { $0 <= limit - 200 }
            var parameters = options.parameters
            parameters.merge(["levels": levels, "concurrency": "\(concurrency)", "source_addresses": "\(sourceAddresses)",
                              "open_file_limit": "\(limit)"]) { $1 }
            do {
                var report = try await ConnectRun(levels: reachable, sourceAddresses: sourceAddresses, target: target, settings: settings)
                    .run(parameters: parameters)
                for skipped in counts where !reachable.contains(skipped) {
                    report.warnings.append("level \(skipped) skipped: the open-file limit here is \(limit) per process (RLIMIT_NOFILE hard limit)")
                }
                try options.finish(report, target: target, settings: settings)
            } catch {
                target.stop()
                throw error
            }
        }
    }

    struct Mixed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Many small channels and a few large ones, privacy-off users, batched confirmations and unread marks.")
        @OptionGroup var options: BenchOptions
        @Option(help: "Users (one connection each).") var users = 1000
        @Option(help: "Messages per second over all channels.") var rate = 200.0
        @Option(help: "Message text size in bytes.") var payload = 100
        @Option(help: "Seed of the channel layout.") var seed: UInt64 = 1

        func validate() throws {
            guard users >= 10, rate > 0, payload >= 0 else { throw ValidationError("need at least 10 users and a positive rate") }
        }

        func run() async throws {
            let (target, settings) = try options.prepare(scenario: "mixed")
            let workload = LoadScenario.mixed(users: users, rate: rate, payloadBytes: payload, seed: seed)
            var parameters = options.parameters
            parameters.merge(["users": "\(users)", "rate_per_s": "\(rate)", "payload_bytes": "\(payload)", "seed": "\(seed)",
                              "channels": "\(workload.channels.count)"]) { $1 }
            try await options.runLoad(workload, scenario: "mixed", parameters: parameters, target: target, settings: settings)
        }
    }
}
