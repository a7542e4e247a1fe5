import ArgumentParser
import CheckmarkServer
import Foundation

/// The options `checkmark serve`, `config check` and `config print` share: the config file and the
/// `--set` flags.
struct ConfigSources: ParsableArguments {
    @Option(help: "A JSON config file (the keys of `checkmark serve --help`).") var config: String?
    @Option(name: .customLong("set"), help: "A setting as key=value (repeatable), as `checkmark serve --set`.")
    var settings: [String] = []

    /// Everything the config file, the environment and the flags say: `flags` (a command's own named
    /// options, by key), then the `--set` ones, which win.
    func report(flags named: [String: String] = [:]) throws -> ConfigurationLoader.Report {
        var flags = named
        for setting in settings {
            guard let equals = setting.firstIndex(of: "=") else { throw ValidationError("--set takes key=value, not \(setting)") }
            flags[String(setting[..<equals]).replacingOccurrences(of: "-", with: "_")] = String(setting[setting.index(after: equals)...])
        }
        var file: (String, String)?
        if let config {
            guard let contents = try? String(contentsOfFile: config, encoding: .utf8) else {
                throw ValidationError("cannot read config file \(config)")
            }
            file = (config, contents)
        }
        return ConfigurationLoader.check(file: file, environment: ProcessInfo.processInfo.environment, flags: flags)
    }
}
