import ArgumentParser
import CheckmarkServer
import Foundation

/// `checkmark config check`: prints `ok`, or every error (each naming its source and key); warnings
/// (unknown `CHECKMARK_*` variables) go to standard error either way. Exit status 0 when the
/// settings are valid, 2 when not.
struct ConfigCheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Validate the config file, the CHECKMARK_* environment and --set: print ok (exit 0) or every error (exit 2).")

    @OptionGroup var sources: ConfigSources

    func run() throws {
        let report = try sources.report()
        for warning in report.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        guard report.errors.isEmpty else {
            for error in report.errors { print("error: \(error)") }
            throw ExitCode(2)
        }
        print("ok")
    }
}
