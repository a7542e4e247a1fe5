import ArgumentParser

/// `checkmark replay`: see, export and re-run what a server did (docs/replay.md).
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Inspect a journal or trace, export a journal as a trace, re-run a recorded trace and diff it.",
        discussion: "Record a live trace with `checkmark serve --set record=trace.jsonl` (or `checkmark bench ... --server-set record=trace.jsonl`), or attach to a running server with `checkmark replay record`.",
        subcommands: [ReplayInspectCommand.self, ReplayExportCommand.self, ReplayRecordCommand.self, ReplayRunCommand.self])
}
