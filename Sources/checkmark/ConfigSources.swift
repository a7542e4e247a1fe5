import ArgumentParser
import CheckmarkServer
import Foundation

/// The options `checkmark config check` and `config print` share: the sources `serve` reads.
struct ConfigSources: ParsableArguments {
    @Option(help: "A JSON config file (the keys of `checkmark serve --help`).") var config: String?
    @Option(name: .customLong("set"), help: "A setting as key=value (repeatable), as `checkmark serve --set`.")
    var settings: [String] = []

    /// Everything the config file, the environment and the `--set` flags say.
    func report() throws -> ConfigurationLoader.Report {
        var flags: [String: String] = [:]
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
