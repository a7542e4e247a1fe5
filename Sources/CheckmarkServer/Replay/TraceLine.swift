import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire

/// One line of a trace (JSON lines, docs/replay.md): an accepted command with its time, or an event
/// it produced with who received it. Recorded live (`checkmark serve --record`), every connection's
/// commands are in it and events name their recipient connections; exported from a journal, only
/// durable commands are, events name their audience instead, and a first line says what retention
/// removed, if anything.
package enum TraceLine: Sendable, Hashable {
    case command(seq: Int64, at: Timestamp, command: ReceiptsCommand)
    case event(TraceEvent)
    /// What the exported journal no longer has.
    case pruned(PrunedHistory)

    /// Why a line could not be read.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var line: Int
        package var reason: String
        package var description: String { "trace line \(line): \(reason)" }
    }

    /// The line's JSON text (no newline).
    package var json: [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        switch self {
        case .command(let seq, let at, let command):
            w.field("kind", "command")
            w.field("seq", Int(seq))
            w.field("at", at)
            w.key("command")
            w.raw(CommandCodec.encode(command))
        case .event(let event):
            w.field("kind", "event")
            w.field("command", Int(event.commandSeq))
            w.field("type", event.type)
            w.fieldIfPresent("cid", event.cid?.description)
            if let seq = event.channelSeq { w.field("channel_seq", Int(seq)) }
            w.fieldIfPresent("audience", event.audience?.storedValue)
            if let recipients = event.recipients {
                w.key("recipients")
                w.beginArray()
                for recipient in recipients {
                    w.beginObject()
                    w.field("connection", recipient.connectionID)
                    w.field("user", recipient.userID)
                    if let counts = recipient.counts {
                        w.field("total_unread", counts.totalUnread)
                        w.field("unread_channels", counts.unreadChannels)
                        w.field("unread_threads", counts.unreadThreads)
                    }
                    w.endObject()
                }
                w.endArray()
            }
            w.key("event")
            if event.json.isEmpty { w.null() } else { w.raw(event.json) }  // journaled without its JSON
        case .pruned(let history):
            w.field("kind", "pruned")
            if let before = history.commandsBefore { w.field("commands_before", Int(before)) }
            w.key("channels")
            w.beginArray()
            for channel in history.channels {
                w.beginObject()
                w.field("cid", channel.cid)
                w.field("through_channel_seq", Int(channel.throughChannelSeq))
                w.endObject()
            }
            w.endArray()
        }
        w.endObject()
        return w.bytes
    }

    /// Reads one line; `number` (1-based) goes into the error.
    package static func parse(_ bytes: some Collection<UInt8>, number: Int) throws(Failure) -> TraceLine {
        func fail(_ reason: String) -> Failure { Failure(line: number, reason: reason) }
        let json: JSONValue
        do { json = try JSONParser.parse(bytes, limits: .stored) } catch { throw fail("not JSON: \(error.description)") }
        switch json["kind"]?.stringValue {
        case "command":
            guard let seq = json["seq"]?.intValue, let atText = json["at"]?.stringValue, let at = Timestamp(rfc3339: atText),
                  let command = json["command"] else { throw fail("a command line needs seq, at (RFC 3339) and command") }
            var w = JSONWriter()
            w.value(command)
            do {
                return .command(seq: Int64(seq), at: at, command: try CommandCodec.decode(w.bytes))
            } catch {
                throw fail(error.description)
            }
        case "event":
            guard let commandSeq = json["command"]?.intValue, let type = json["type"]?.stringValue, let event = json["event"] else {
                throw fail("an event line needs command, type and event")
            }
            var recipients: [TracedRecipient]?
            if let list = json["recipients"]?.arrayValue {
                recipients = try list.map { item throws(Failure) -> TracedRecipient in
                    guard let connection = item["connection"]?.stringValue, let user = item["user"]?.stringValue else {
                        throw fail("a recipient needs connection and user")
                    }
                    var counts: UnreadCounts?
                    if let total = item["total_unread"]?.intValue, let channels = item["unread_channels"]?.intValue {
                        counts = UnreadCounts(totalUnread: total, unreadChannels: channels, unreadThreads: item["unread_threads"]?.intValue ?? 0)
                    }
                    return TracedRecipient(connectionID: connection, userID: user, counts: counts)
                }
            }
            var w = JSONWriter()
            w.value(event)
            return .event(TraceEvent(
                commandSeq: Int64(commandSeq), type: type, cid: json["cid"]?.stringValue.flatMap(ChannelCID.init),
                channelSeq: json["channel_seq"]?.intValue.map(Int64.init),
                audience: json["audience"]?.stringValue.flatMap(EventAudience.init(storedValue:)), recipients: recipients,
                json: event == .null ? [] : w.bytes))
        case "pruned":
            var history = PrunedHistory(commandsBefore: json["commands_before"]?.intValue.map(Int64.init))
            for item in json["channels"]?.arrayValue ?? [] {
                guard let cid = item["cid"]?.stringValue.flatMap(ChannelCID.init), let through = item["through_channel_seq"]?.intValue else {
                    throw fail("a pruned channel needs cid (type:id) and through_channel_seq")
                }
                history.channels.append(.init(cid: cid, throughChannelSeq: Int64(through)))
            }
            return .pruned(history)
        default:
            throw fail("kind must be command, event or pruned")
        }
    }
}
