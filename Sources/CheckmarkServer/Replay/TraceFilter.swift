import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire

/// Selects the lines of a trace about one channel, user, set of types or time range (`checkmark
/// replay inspect`), and prints a line for people. Pure.
package struct TraceFilter: Sendable {
    package var channel: ChannelCID?
    package var user: String?
    package var types: Set<String>?
    package var since: Timestamp?
    package var until: Timestamp?

    package init(channel: ChannelCID? = nil, user: String? = nil, types: Set<String>? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
        self.channel = channel
        self.user = user
        self.types = types
        self.since = since
        self.until = until
    }

    /// The matching commands, each followed by its matching events.
    package func apply(_ lines: [TraceLine]) -> [TraceLine] {
        var out: [TraceLine] = []
        var group: (command: TraceLine, at: Timestamp, facts: CommandFacts, events: [TraceEvent])?
        func flush() {
            guard let current = group else { return }
            group = nil
            if let since, current.at < since { return }
            if let until, current.at >= until { return }
            let events = current.events.filter(matches)
            let commandMatches = (channel == nil || current.facts.channels.contains(channel!))
                && (user == nil || current.facts.users.contains(user!))
                && (types == nil || types!.contains(current.facts.op))
            if commandMatches || !events.isEmpty {
                out.append(current.command)
                out += events.map { .event($0) }
            }
        }
        for line in lines {
            switch line {
            case .command(_, let at, let command):
                flush()
                group = (line, at, CommandFacts(command), [])
            case .event(let event):
                group?.events.append(event)
            case .pruned:
                flush()
                out.append(line)  // whatever the filter: it says what no filter can show
            }
        }
        flush()
        return out
    }

    private func matches(_ event: TraceEvent) -> Bool {
        if let channel, event.cid != channel { return false }
        if let types, !types.contains(event.type) { return false }
        if let user {
            let subject = (try? JSONParser.parse(event.json, limits: .stored))?["user"]?["id"]?.stringValue
            let reaches = event.recipients?.contains { $0.userID == user } ?? false
            if subject != user && !reaches && event.audience?.restrictedTo != user { return false }
        }
        return true
    }

    /// One line as a person reads it.
    package static func describe(_ line: TraceLine) -> String {
        switch line {
        case .command(let seq, let at, let command):
            let facts = CommandFacts(command)
            var text = "\(at.rfc3339)  #\(seq) \(facts.op)"
            if !facts.users.isEmpty { text += " user=" + facts.users.sorted().joined(separator: ",") }
            if !facts.channels.isEmpty { text += " cid=" + facts.channels.map(\.description).sorted().joined(separator: ",") }
            if let detail = facts.detail { text += " " + detail }
            return text
        case .event(let event):
            let json = try? JSONParser.parse(event.json, limits: .stored)
            var text = "      -> \(event.type)"
            if let cid = event.cid { text += " \(cid)" }
            if let seq = event.channelSeq { text += " seq=\(seq)" }
            if let subject = json?["user"]?["id"]?.stringValue { text += " user=\(subject)" }
            if let id = json?["message_id"]?.stringValue ?? json?["last_read_message_id"]?.stringValue
                ?? json?["last_delivered_message_id"]?.stringValue { text += " message=\(id)" }
            if let recipients = event.recipients {
                let users = Set(recipients.map(\.userID)).sorted()
                let shown = users.prefix(8).joined(separator: ",") + (users.count > 8 ? ",+\(users.count - 8) more" : "")
                text += " to \(recipients.count) connection(s) of [\(shown)]"
            } else if let audience = event.audience {
                text += " for \(audience.storedValue)"
            }
            return text
        case .pruned(let history):
            var parts: [String] = []
            if let before = history.commandsBefore { parts.append("commands before #\(before) that have no event left") }
            let shown = history.channels.prefix(8).map { "\($0.cid) through seq=\($0.throughChannelSeq)" }
            if !shown.isEmpty {
                parts.append("events of " + shown.joined(separator: ", ") + (history.channels.count > 8 ? ", +\(history.channels.count - 8) more channels" : ""))
            }
            return "pruned (retention): the journal no longer has " + parts.joined(separator: "; ")
        }
    }
}
