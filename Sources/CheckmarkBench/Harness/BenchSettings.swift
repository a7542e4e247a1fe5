/// How a `checkmark bench` run is measured, whatever its scenario.
package struct BenchSettings: Sendable {
    /// Seconds of load before measuring starts (connections warm, caches full).
    package var warmupSeconds = 2
    /// Seconds measured.
    package var durationSeconds = 10
    /// Where `report.json` and `report.html` go.
    package var reportDirectory: String
    /// Event loop threads of the harness's clients.
    package var harnessThreads = 1
    /// CPUs the harness runs on (nil: wherever the kernel puts it).
    package var harnessCPUs: [Int]?
    /// Offer permessage-deflate on client connections.
    package var compression = false
    /// Connections opened at once during setup.
    package var connectConcurrency = 256
    /// The command line, for the report.
    package var command: String
    /// One progress line per second on a terminal; without one, every `progressEvery` seconds.
    package var progressEvery = 5

    package init(reportDirectory: String, command: String) {
        self.reportDirectory = reportDirectory
        self.command = command
    }
}
