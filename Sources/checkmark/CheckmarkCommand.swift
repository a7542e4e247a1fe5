import ArgumentParser
import CheckmarkServer

/// The `checkmark` executable: the service and its tools.
@main
struct CheckmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkmark",
        abstract: "Delivery and read receipts over WebSocket, Stream-compatible.",
        version: BuildInfo.description,
        subcommands: [ServeCommand.self, DemoCommand.self, BenchCommand.self, ReplayCommand.self, BenchStorageCommand.self, EchoCommand.self, TokenCommand.self, AutobahnClientCommand.self, ConfigCommand.self]
    )
}
