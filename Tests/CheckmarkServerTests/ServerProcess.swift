import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `checkmark serve` binary in its own process, for tests that kill it.
final class ServerProcess {
    let process = Process()
    let port: Int
    let dataDirectory: String
    private let output = Pipe()

    enum Failure: Error, CustomStringConvertible {
        case binaryMissing(String)
        case didNotStart(String)
        var description: String {
            switch self {
            case .binaryMissing(let path): "\(path) not found: build the package (swift build) before these tests"
            case .didNotStart(let log): "checkmark serve did not start: \(log)"
            }
        }
    }

    /// The `checkmark` executable built beside the test bundle.
    static var binary: String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("checkmark").path
    }

    /// Starts `checkmark serve --port 0` on `dataDirectory` and waits for its "listening" line.
    init(dataDirectory: String, extraArguments: [String] = []) throws {
        self.dataDirectory = dataDirectory
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { throw Failure.binaryMissing(Self.binary) }
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--port", "0", "--data-dir", dataDirectory, "--api-key", TestServer.apiKey,
                             "--api-secret", TestServer.apiSecret, "--log-level", "error"] + extraArguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var seen = ""
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(30)
        var port: Int?
        while port == nil && Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let line = seen.split(separator: "\n").first(where: { $0.contains("listening on") }),
               let colon = line.lastIndex(of: ":") {
                port = Int(line[line.index(after: colon)...])
            }
        }
        guard let port else {
            process.terminate()
            throw Failure.didNotStart(seen)
        }
        self.port = port
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end; returns its exit status (or the signal that ended it, negated).
    func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
