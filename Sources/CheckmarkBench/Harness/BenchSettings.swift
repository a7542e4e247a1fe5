/// How a `checkmark bench` run is measured, whatever its scenario.
public struct BenchSettings: Sendable {
    /// Seconds of load before measuring starts (connections warm, caches full).
    public var warmupSeconds = 2
    /// Seconds measured.
    public var durationSeconds = 10
    /// Where `report.json` and `report.html` go.
    public var reportDirectory: String
    /// Event loop threads of the harness's clients.
    public var harnessThreads = 1
    /// CPUs the harness runs on (nil: wherever the kernel puts it).
    public var harnessCPUs: [Int]?
    /// Offer permessage-deflate on client connections.
    public var compression = false
    /// Connections opened at once during setup.
    public var connectConcurrency = 256
    /// The command line, for the report.
    public var command: String
    /// One progress line per second on a terminal; without one, every `progressEvery` seconds.
    public var progressEvery = 5

    public init(reportDirectory: String, command: String) {
        self.reportDirectory = reportDirectory
        self.command = command
    }
}
