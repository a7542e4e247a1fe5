import ArgumentParser
import CheckmarkBench
import CheckmarkClient
import CheckmarkServer
import Foundation

/// The options every `checkmark bench` scenario shares: where the server is, how long to measure,
/// where the report goes, and how the harness and a local server share the machine.
struct BenchOptions: ParsableArguments {
    @Option(help: "The server to load, ws://host:port (default: start a local checkmark serve on 127.0.0.1).")
    var url: String?
    @Option(help: "Another node of the cluster --url belongs to (repeatable): clients connect to --url and these, each user always to the same node; setup goes to --url.")
    var alsoURL: [String] = []
    @Option(help: "The server's api_key (default: the development key).") var apiKey = ServerConfiguration.developmentAPIKey
    @Option(help: "The server's api_secret, to sign the clients' tokens (default: the development secret).")
    var apiSecret = ServerConfiguration.developmentAPISecret
    @Option(help: "Pid of a server on this machine given by --url, to sample its CPU and memory from /proc.")
    var serverPid: Int32?
    @Option(help: "Seconds of load before measuring.") var warmup = 2
    @Option(help: "Seconds measured.") var duration = 10
    @Option(help: "Directory for report.json and report.html (default: bench-reports/<scenario>-<time>).") var report: String?
    @Option(help: "Event loop threads of the harness (default: the cores it may use).") var harnessThreads: Int?
    @Flag(help: "Do not pin the local server to core 0 and the harness to the other cores.") var noPin = false
    @Flag(help: "Offer permessage-deflate on the client connections.") var compression = false
    @Option(help: "A setting of the local server as key=value (repeatable), e.g. --server-set max_outbound_buffer=65536.")
    var serverSet: [String] = []

    /// Settings the local server gets unless --server-set says otherwise: rate limits out of the way
    /// (the harness sends faster than one person), and room for the slow consumers of one user.
    static let localServerDefaults = [
        "commands_per_second": "1000000", "command_burst": "1000000", "max_connections_per_user": "1000",
        "rest_requests_per_second": "1000000", "rest_request_burst": "1000000",
    ]

    func validate() throws {
        guard warmup >= 0, duration > 0 else { throw ValidationError("--warmup must be >= 0 and --duration > 0") }
        if let harnessThreads, harnessThreads <= 0 { throw ValidationError("--harness-threads must be positive") }
        if let url, WebSocketURL(url) == nil { throw ValidationError("--url must be ws://host:port, not \(url)") }
        if !alsoURL.isEmpty && url == nil { throw ValidationError("--also-url needs --url") }
        for other in alsoURL where WebSocketURL(other) == nil { throw ValidationError("--also-url must be ws://host:port, not \(other)") }
        for setting in serverSet where !setting.contains("=") { throw ValidationError("--server-set takes key=value, not \(setting)") }
    }

    /// Starts the target (a local server when no --url), with the CPU split, and the settings.
    func prepare(scenario: String) throws -> (BenchTarget, BenchSettings) {
        FileLimit.raiseToHard()
        let cores = CPUAffinity.count
        let pin = !noPin && url == nil && cores >= 2
        let target: BenchTarget
        if let url, let parsed = WebSocketURL(url) {
            let others = alsoURL.compactMap(WebSocketURL.init).map { (host: $0.host, port: $0.port) }
            target = BenchTarget(host: parsed.host, port: parsed.port, apiKey: apiKey, apiSecret: apiSecret, local: nil, serverPID: serverPid,
                                 otherNodes: others)
        } else {
            var settings = Self.localServerDefaults
            for setting in serverSet {
                let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
                settings[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
            let local = try LocalServer.start(apiKey: apiKey, apiSecret: apiSecret, settings: settings, cpus: pin ? [0] : nil)
            target = BenchTarget(host: "127.0.0.1", port: local.port, apiKey: apiKey, apiSecret: apiSecret, local: local, serverPID: nil)
        }
        let harnessCPUs = pin ? Array(1..<cores) : nil
        if let harnessCPUs { CPUAffinity.pinProcess(toCPUs: harnessCPUs) }
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        var settings = BenchSettings(reportDirectory: report ?? "bench-reports/\(scenario)-\(stamp)",
                                     command: (["checkmark"] + CommandLine.arguments.dropFirst()).joined(separator: " "))
        settings.warmupSeconds = warmup
        settings.durationSeconds = duration
        settings.harnessThreads = harnessThreads ?? (harnessCPUs?.count ?? cores)
        settings.harnessCPUs = harnessCPUs
        settings.compression = compression
        return (target, settings)
    }

    /// Runs a load scenario, then reports; a local server is stopped whatever happens.
    func runLoad(_ workload: Workload, scenario: String, parameters: [String: String], target: BenchTarget, settings: BenchSettings) async throws {
        do {
            let report = try await LoadRun(workload: workload, target: target, settings: settings).run(scenario: scenario, parameters: parameters)
            try finish(report, target: target, settings: settings)
        } catch {
            target.stop()
            throw error
        }
    }

    /// Prints the table, writes the reports, and stops a local server.
    func finish(_ report: BenchReport, target: BenchTarget, settings: BenchSettings) throws {
        target.stop()
        print(report.table())
        try report.write(to: settings.reportDirectory)
        print("report: \(settings.reportDirectory)/report.html and report.json")
    }

    var parameters: [String: String] {
        ["warmup_s": String(warmup), "duration_s": String(duration), "compression": String(compression), "pinned": String(!noPin && url == nil)]
    }
}
