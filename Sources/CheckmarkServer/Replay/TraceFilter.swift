import CheckmarkCore

/// Selects the lines of a trace about one channel, user, set of types or time range (`checkmark
/// replay inspect`), and prints a line for people. Pure.
public struct TraceFilter: Sendable {
    public var channel: ChannelCID?
    public var user: String?
    public var types: Set<String>?
    public var since: Timestamp?
    public var until: Timestamp?

    public init(channel: ChannelCID? = nil, user: String? = nil, types: Set<String>? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
        self.channel = channel
        self.user = user
        self.types = types
        self.since = since
        self.until = until
    }

    /// The matching commands, each followed by its matching events.
    public func apply(_ lines: [TraceLine]) -> [TraceLine] {
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
            }
        }
        flush()
        return out
    }

    private func matches(_ event: TraceEvent) -> Bool {
        if let channel, event.cid != channel { return false }
        if let types, !types.contains(event.type) { return false }
        if let user {
            let subject = (try? JSONParser.parse(event.json))?["user"]?["id"]?.stringValue
            let reaches = event.recipients?.contains { $0.userID == user } ?? false
            let audience: Bool = if case .user(let id)? = event.audience { id == user } else if case .userWatching(let id)? = event.audience { id == user } else { false }
            if subject != user && !reaches && !audience { return false }
        }
        return true
    }

    /// One line as a person reads it.
    public static func describe(_ line: TraceLine) -> String {
        switch line {
        case .command(let seq, let at, let command):
            let facts = CommandFacts(command)
            var text = "\(at.rfc3339)  #\(seq) \(facts.op)"
            if !facts.users.isEmpty { text += " user=" + facts.users.sorted().joined(separator: ",") }
            if !facts.channels.isEmpty { text += " cid=" + facts.channels.map(\.description).sorted().joined(separator: ",") }
            if let detail = facts.detail { text += " " + detail }
            return text
        case .event(let event):
            let json = try? JSONParser.parse(event.json)
            var text = "      -> \(event.type)"
            if let cid = event.cid { text += " \(cid)" }
            if let seq = event.channelSeq { text += " seq=\(seq)" }
            if let subject = json?["user"]?["id"]?.stringValue { text += " user=\(subject)" }
            if let id = json?["message_id"]?.stringValue ?? json?["last_read_message_id"]?.stringValue
                ?? json?["last_delivered_message_id"]?.stringValue { text += " message=\(id)" }
            if let recipients = event.recipients {
                let users = Set(recipients.map(\.userID)).sorted()
                text += " to \(recipients.count) connection(s) of [\(users.joined(separator: ","))]"
            } else if let audience = event.audience {
                text += " for \(audience.storedValue)"
            }
            return text
        }
    }
}

/// What a command is about: its op, channels, users, and a short detail.
struct CommandFacts {
    var op: String
    var channels: [ChannelCID] = []
    var users: Set<String> = []
    var detail: String?

    init(_ command: ReceiptsCommand) {
        let json = try? JSONParser.parse(CommandCodec.encode(command))
        op = json?["op"]?.stringValue ?? "command"
        switch command {
        case .upsertUser(let user):
            users = [user.id]
            detail = "read_receipts=\(user.privacy.readReceipts) delivery_receipts=\(user.privacy.deliveryReceipts)"
        case .updateUser(let patch):
            users = [patch.id]
            var w = JSONWriter()
            w.value(.object(patch.set))
            detail = String(decoding: w.bytes, as: UTF8.self)
        case .createChannelType(let type): detail = type.name
        case .updateChannelType(let name, _, _): detail = name
        case .createChannel(let cid, let by, let members):
            channels = [cid]
            users = Set(members + (by.map { [$0] } ?? []))
        case .addMembers(let cid, let ids), .removeMembers(let cid, let ids):
            channels = [cid]
            users = Set(ids)
        case .connect(let connection, let user):
            users = [user]
            detail = "connection=\(connection)"
        case .disconnect(let connection): detail = "connection=\(connection)"
        case .watch(let connection, let cid), .stopWatching(let connection, let cid):
            channels = [cid]
            detail = "connection=\(connection)"
        case .sendMessage(let cid, let user, let draft):
            channels = [cid]
            users = [user]
            detail = draft.id.map { "id=\($0)" }
        case .markRead(let cid, let user, let messageID):
            channels = [cid]
            users = [user]
            detail = messageID.map { "up_to=\($0)" }
        case .markReadMany(let user, let targets):
            users = [user]
            channels = targets?.map(\.cid) ?? []
        case .markUnread(let cid, let user, _):
            channels = [cid]
            users = [user]
        case .markDelivered(let user, let latest):
            users = [user]
            channels = latest.map(\.cid)
            detail = latest.map { "\($0.cid)@\($0.messageID)" }.joined(separator: ",")
        }
    }
}
