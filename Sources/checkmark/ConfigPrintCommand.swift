import ArgumentParser
import CheckmarkServer
import Foundation

/// `checkmark config print`: every setting's effective value and where it came from (`default`, the
/// config file, an environment variable, a flag); the api_secret and a postgres_url password masked.
/// Exit status 2 (after the errors) when the settings are not valid.
struct ConfigPrintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "print", abstract: "Print each effective setting with its source (secrets masked).")

    @OptionGroup var sources: ConfigSources

    func run() throws {
        let report = try sources.report()
        for warning in report.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        let width = ConfigurationLoader.keys.map(\.key.count).max() ?? 0
        for (key, _) in ConfigurationLoader.keys {
            let value = ConfigurationLoader.displayValue(of: key, in: report.configuration)
            print("\(key.padding(toLength: width, withPad: " ", startingAt: 0))  \(value.isEmpty ? "(none)" : value)  [\(report.source(of: key))]")
        }
        guard report.errors.isEmpty else {
            for error in report.errors { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
            throw ExitCode(2)
        }
    }
}
