import Foundation

/// A `checkmark serve` the harness starts itself (this same executable), on 127.0.0.1 with a fresh
/// data directory, optionally pinned to given CPUs, and stopped (SIGTERM) at the end.
package final class LocalServer: @unchecked Sendable {
    package let port: Int
    package let pid: Int32
    package let dataDirectory: String
    private let process: Process

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts the server and waits for its "listening" line. `settings` are `serve --set` pairs.
    package static func start(apiKey: String, apiSecret: String, settings: [String: String], cpus: [Int]?) throws -> LocalServer {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let data = NSTemporaryDirectory() + "checkmark-bench-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        var arguments = ["serve", "--port", "0", "--data-dir", data, "--api-key", apiKey, "--api-secret", apiSecret, "--log-level", "warning"]
        for (key, value) in settings.sorted(by: { $0.key < $1.key }) { arguments += ["--set", "\(key)=\(value)"] }
        let process = Process()
        if let cpus, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", cpus.map(String.init).joined(separator: ","), executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let handle = output.fileHandleForReading
        var line: [UInt8] = []
        var port: Int?
        let deadline = Date().addingTimeInterval(60)
        while port == nil, Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            for byte in chunk {
                if byte == 10 {
                    let text = String(decoding: line, as: UTF8.self)
                    if text.hasPrefix("checkmark listening on "), let value = Int(text.split(separator: ":").last ?? "") { port = value }
                    line.removeAll()
                } else {
                    line.append(byte)
                }
            }
        }
        guard let port else {
            process.terminate()
            throw Failure(description: "the local server did not start (see its output above)")
        }
        // Keep draining its standard output so that it never blocks on a full pipe.
        handle.readabilityHandler = { _ = $0.availableData }
        return LocalServer(port: port, pid: process.processIdentifier, dataDirectory: data, process: process)
    }

    private init(port: Int, pid: Int32, dataDirectory: String, process: Process) {
        self.port = port
        self.pid = pid
        self.dataDirectory = dataDirectory
        self.process = process
    }

    /// SIGTERM, wait, remove the data directory.
    package func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
