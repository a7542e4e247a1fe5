import ArgumentParser
import CheckmarkServer

/// Where `replay inspect` and `replay export` read history: a data directory's journal or a trace file.
struct TraceSource: ParsableArguments {
    @Option(help: "A data directory whose journal to read (the server using it must be stopped).") var dataDir: String?
    @Option(help: "A trace file (JSON lines) to read instead.") var trace: String?

    func validate() throws {
        guard (dataDir != nil) != (trace != nil) else { throw ValidationError("give exactly one of --data-dir or --trace") }
    }

    /// Every line, in order.
    func lines() throws -> [TraceLine] {
        if let trace { return try TraceFile.lines(atPath: trace) }
        return try TraceFile.journalLines(dataDirectory: dataDir!)
    }
}
