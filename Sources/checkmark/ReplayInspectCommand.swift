import ArgumentParser
import CheckmarkCore
import CheckmarkServer

/// `checkmark replay inspect`: the history of a channel, user or event type as a timeline or JSON lines.
struct ReplayInspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Print a journal or trace as a readable timeline (or JSON lines), filtered.",
        discussion: "A command is shown when it matches every filter given, with the events it produced; with --type, only matching events are shown.")

    @OptionGroup var source: TraceSource
    @Option(help: "Only this channel (type:id).") var channel: String?
    @Option(help: "Only commands by, and events about or to, this user.") var user: String?
    @Option(help: "Only these event types or command ops (comma-separated), e.g. message.read,mark_read.") var type: String?
    @Option(help: "Only from this time on (RFC 3339).") var since: String?
    @Option(help: "Only before this time (RFC 3339).") var until: String?
    @Flag(help: "Print the matching lines as JSON lines (a trace) instead of a timeline.") var json = false

    func run() throws {
        let cid = try channel.map { text in
            guard let cid = ChannelCID(text) else { throw ValidationError("--channel \(text) is not type:id") }
            return cid
        }
        let from = try since.map(Self.time)
        let to = try until.map(Self.time)
        let filter = TraceFilter(
            channel: cid, user: user, types: type.map { Set($0.split(separator: ",").map(String.init)) }, since: from, until: to)
        for line in filter.apply(try source.lines()) {
            print(json ? String(decoding: line.json, as: UTF8.self) : TraceFilter.describe(line))
        }
    }

    static func time(_ text: String) throws -> Timestamp {
        guard let time = Timestamp(rfc3339: text) else { throw ValidationError("\(text) is not an RFC 3339 time") }
        return time
    }
}
