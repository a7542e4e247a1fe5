import ArgumentParser

/// `checkmark config`: check or print the settings `checkmark serve` would run with, without starting it.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check or print the effective settings (config file, CHECKMARK_* environment, --set) without starting the server.",
        subcommands: [ConfigCheckCommand.self, ConfigPrintCommand.self])
}
