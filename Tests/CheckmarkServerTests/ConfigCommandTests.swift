import CheckmarkServer
import Foundation
import Testing

/// `checkmark config check` and `config print` as an operator runs them: exit status 0 / 2, every
/// error on stdout, warnings on stderr, sources beside the values, secrets masked.
@Suite("checkmark config")
struct ConfigCommandTests {
    /// Runs the built `checkmark` with `arguments` and `environment` (added to a clean one).
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { _, new in new }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output, errors)
    }

    @Test func checkPrintsOkOrEveryErrorWithExitStatusZeroOrTwo() throws {
        let good = try Self.run(["config", "check", "--set", "max_request_body=4MiB"], environment: ["CHECKMARK_IDLE_TIMEOUT": "2m"])
        #expect(good.status == 0)
        #expect(good.out == "ok\n")
        let file = NSTemporaryDirectory() + "checkmark-config-\(UUID().uuidString).json"
        try #"{"port": 70000, "max_conections": 5}"#.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let bad = try Self.run(["config", "check", "--config", file, "--set", "keepalive=500ms"], environment: ["CHECKMARK_PORTT": "1"])
        #expect(bad.status == 2)
        #expect(bad.out.contains("error: config file \(file): port must be between 0 and 65535, not 70000"))
        #expect(bad.out.contains("did you mean max_connections?"))
        #expect(bad.out.contains("error: flag --keepalive: keepalive must be a whole number of seconds, not '500ms'"))
        #expect(bad.err.contains("warning: environment CHECKMARK_PORTT is not a setting and is ignored; did you mean CHECKMARK_PORT?"))
    }

    @Test func printShowsEveryKeyWithItsSourceAndMasksSecrets() throws {
        let result = try Self.run(["config", "print", "--set", "port=9000"],
                                  environment: ["CHECKMARK_API_SECRET": "a-long-production-secret", "CHECKMARK_HOST": "0.0.0.0"])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == ConfigurationLoader.keys.count, "one line per key")
        #expect(lines.contains { $0.hasPrefix("port ") && $0.hasSuffix("[flag --port]") && $0.contains(" 9000 ") })
        #expect(lines.contains { $0.hasPrefix("host ") && $0.hasSuffix("[environment CHECKMARK_HOST]") })
        #expect(lines.contains { $0.hasPrefix("keepalive ") && $0.hasSuffix("[default]") })
        #expect(!result.out.contains("a-long-production-secret"))
    }
}
