import ArgumentParser
import CheckmarkServer
import Foundation

/// `checkmark replay export`: a data directory's journal as a trace file.
struct ReplayExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a journal (or a filtered trace) as a trace: JSON lines of commands and their events.")

    @OptionGroup var source: TraceSource
    @Option(help: "The trace file to write.") var out: String

    func run() throws {
        let lines = try source.lines()
        var text: [UInt8] = []
        for line in lines {
            text += line.json
            text.append(UInt8(ascii: "\n"))
        }
        guard FileManager.default.createFile(atPath: out, contents: Data(text)) else { throw ValidationError("cannot write \(out)") }
        print("wrote \(lines.count) lines to \(out)")
        if case .pruned = lines.first { print(TraceFilter.describe(lines[0])) }
    }
}
