import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire

/// What cluster nodes tell each other about connections only one of them holds. A REST call that
/// names a `connection_id` (a channel query with `watch: true`) reaches whichever node the load
/// balancer picked; when that node does not hold the connection it asks every node, the holder applies
/// the command and replies. Encoded as one JSON object, well under the notification payload limit.
enum PeerMessage: Sendable, Equatable {
    /// `command` is a `watch` or `stop_watching` of a connection the sender does not hold.
    case request(from: String, id: Int, command: ReceiptsCommand)
    /// The holder's answer to request `id` of node `to`: nil when the command took effect.
    case reply(to: String, id: Int, error: ReceiptsError?)
    /// Exactly these users watch `cid` on node `from` now (see ``ClusterPresence``).
    case presence(from: String, cid: ChannelCID, users: [String])
    /// Node `from` is alive (sent every ``ReceiptsService/clusterPollInterval``); `link` is where it
    /// takes direct links from the other nodes (`peer_link`, ``PeerLinkServer``), if anywhere.
    case alive(from: String, link: String?)
    /// Node `from` just started: every node answers with its presence. `link` as for ``alive(from:link:)``.
    case hello(from: String, link: String?)
    /// `command` is for a shard node `to` owns (as `from` last heard): `to` applies it and answers,
    /// with the REST answer `answering` asks for made from the state its commit left, if any.
    case forward(from: String, to: String, id: Int, command: ReceiptsCommand, answering: CommandAnswer?)
    /// Node `from` committed journal entries through `seq` (sent over direct links, in place of the
    /// commit's NOTIFY, when every live node is linked).
    case committed(from: String, seq: Int64)
    /// Node `from` committed `entries` (each with its command whole, texts included; without their
    /// events), all of shards it owns, having applied the cluster stream through `cluster`: sent
    /// over direct links in place of the commit's NOTIFY, so that the other nodes apply them
    /// without reading the journal (once they stand at `cluster` there too).
    case entries(from: String, cluster: Int64, entries: [JournalEntry])
    /// Node `from` sent a typing or custom event of `type` and `user` in `cid` to its watchers of the
    /// channel (``ChannelSignals`` decided it there); `event` is the JSON they got. Every other node
    /// sends it to its own watchers of `cid` it reaches (typing: all but `user`'s connections); `to`,
    /// when given, names the only nodes it is for (those a link did not reach).
    case signal(from: String, type: String, cid: ChannelCID, user: String, event: String, to: [String]? = nil)
    /// Node `to`'s forwarded command `id` ended so; `body` is the REST answer it asked for (nil when
    /// not asked for, not made, or too large for a peer message).
    case forwarded(to: String, id: Int, answer: ForwardAnswer, body: String?)

    /// The message's kind, as its `kind` field says.
    var kind: String {
        switch self {
        case .request: "request"
        case .reply: "reply"
        case .presence: "presence"
        case .alive: "alive"
        case .hello: "hello"
        case .committed: "committed"
        case .entries: "entries"
        case .forward: "forward"
        case .forwarded: "forwarded"
        case .signal: "signal"
        }
    }

    /// The connection commands that can be asked of another node.
    static func isForwardable(_ command: ReceiptsCommand) -> String? {
        switch command {
        case .watch(let connectionID, _), .stopWatching(let connectionID, _): connectionID
        // A connection opens and closes only where its socket is; everything else is no connection's.
        case .connect, .disconnect, .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers,
             .removeMembers, .sendMessage, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead, .markUnread, .markDelivered: nil
        }
    }

    var encoded: String {
        var w = JSONWriter()
        w.beginObject()
        switch self {
        case .request(let from, let id, let command):
            w.field("kind", "request")
            w.field("node", from)
            w.field("id", id)
            w.field("command", String(decoding: CommandCodec.encode(command), as: UTF8.self))
        case .reply(let to, let id, let error):
            w.field("kind", "reply")
            w.field("node", to)
            w.field("id", id)
            if let error {
                w.field("error", error.code)
                switch error {
                case .notAMember(let user, let cid):
                    w.field("user", user)
                    w.field("cid", cid.description)
                case .unknownChannel(let cid):
                    w.field("cid", cid.description)
                default:
                    w.field("detail", error.description)
                }
            }
        case .presence(let from, let cid, let users):
            w.field("kind", "presence")
            w.field("node", from)
            w.field("cid", cid.description)
            w.key("users")
            w.beginArray()
            for user in users { w.string(user) }
            w.endArray()
        case .signal(let from, let type, let cid, let user, let event, let to):
            w.field("kind", "signal")
            w.field("node", from)
            w.field("type", type)
            w.field("cid", cid.description)
            w.field("user", user)
            w.field("event", event)
            if let to {
                w.key("to")
                w.value(.array(to.map { .string($0) }))
            }
        case .alive(let from, let link):
            w.field("kind", "alive")
            w.field("node", from)
            w.fieldIfPresent("link", link)
        case .hello(let from, let link):
            w.field("kind", "hello")
            w.field("node", from)
            w.fieldIfPresent("link", link)
        case .forward(let from, let to, let id, let command, let answering):
            w.field("kind", "forward")
            w.field("node", from)
            w.field("to", to)
            w.field("id", id)
            w.field("command", String(decoding: CommandCodec.encode(command), as: UTF8.self))
            switch answering {
            case .message?:
                w.field("answering", "message")
            case .readState(let cid, let reader, let thread)?:
                w.field("answering", "read_state")
                w.field("answering_cid", cid.description)
                w.field("answering_user", reader)
                w.fieldIfPresent("answering_thread", thread)
            case nil:
                break
            }
        case .committed(let from, let seq):
            w.field("kind", "committed")
            w.field("node", from)
            w.field("seq", Int(seq))
        case .entries(let from, let cluster, let entries):
            w.field("kind", "entries")
            w.field("node", from)
            w.field("cluster", Int(cluster))
            w.key("entries")
            w.beginArray()
            for entry in entries {
                w.beginObject()
                w.field("seq", Int(entry.seq))
                w.field("stream", entry.stream.rawValue)
                w.field("stream_seq", Int(entry.streamSeq))
                w.field("at", Int(entry.at.rawValue))
                w.field("command", String(decoding: CommandCodec.encode(entry.command), as: UTF8.self))
                w.endObject()
            }
            w.endArray()
        case .forwarded(let to, let id, let answer, let body):
            w.field("kind", "forwarded")
            w.field("node", to)
            w.field("id", id)
            Self.write(answer, into: &w)
            w.fieldIfPresent("body", body)
        }
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// Reads ``encoded``; nil for anything else (a message of another version is ignored).
    init?(_ text: String) {
        guard let json = try? JSONParser.parse(text, limits: .stored), let kind = json["kind"]?.stringValue,
              let node = json["node"]?.stringValue else { return nil }
        switch kind {
        case "presence":
            guard let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init), case .array(let list)? = json["users"] else { return nil }
            self = .presence(from: node, cid: cid, users: list.compactMap(\.stringValue))
            return
        case "alive":
            self = .alive(from: node, link: json["link"]?.stringValue)
            return
        case "signal":
            guard let type = json["type"]?.stringValue, let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init),
                  let user = json["user"]?.stringValue, let event = json["event"]?.stringValue else { return nil }
            let to = json["to"]?.arrayValue.map { $0.compactMap(\.stringValue) }
            self = .signal(from: node, type: type, cid: cid, user: user, event: event, to: to)
            return
        case "hello":
            self = .hello(from: node, link: json["link"]?.stringValue)
            return
        case "committed":
            guard let seq = json["seq"]?.intValue else { return nil }
            self = .committed(from: node, seq: Int64(seq))
            return
        case "entries":
            guard case .array(let list)? = json["entries"], let cluster = json["cluster"]?.intValue else { return nil }
            var entries: [JournalEntry] = []
            for item in list {
                guard let seq = item["seq"]?.intValue, let stream = item["stream"]?.intValue.flatMap(JournalStream.init(rawValue:)),
                      let streamSeq = item["stream_seq"]?.intValue, let at = item["at"]?.intValue,
                      let text = item["command"]?.stringValue, let command = try? CommandCodec.decode(Array(text.utf8)) else { return nil }
                entries.append(JournalEntry(seq: Int64(seq), stream: stream, streamSeq: Int64(streamSeq), at: Timestamp(rawValue: Int64(at)),
                                            command: command, events: []))
            }
            self = .entries(from: node, cluster: Int64(cluster), entries: entries)
            return
        default:
            break
        }
        guard let id = json["id"]?.intValue else { return nil }
        switch kind {
        case "forward":
            guard let to = json["to"]?.stringValue, let command = json["command"]?.stringValue,
                  let decoded = try? CommandCodec.decode(Array(command.utf8)) else { return nil }
            var answering: CommandAnswer?
            switch json["answering"]?.stringValue {
            case "message"?:
                answering = .message
            case "read_state"?:
                guard let cid = json["answering_cid"]?.stringValue.flatMap(ChannelCID.init),
                      let reader = json["answering_user"]?.stringValue else { return nil }
                answering = .readState(cid: cid, reader: reader, thread: json["answering_thread"]?.stringValue)
            case nil:
                answering = nil
            default:
                return nil
            }
            self = .forward(from: node, to: to, id: id, command: decoded, answering: answering)
        case "forwarded":
            guard let answer = Self.answer(json) else { return nil }
            self = .forwarded(to: node, id: id, answer: answer, body: json["body"]?.stringValue)
        case "request":
            guard let command = json["command"]?.stringValue, let decoded = try? CommandCodec.decode(Array(command.utf8)),
                  Self.isForwardable(decoded) != nil else { return nil }
            self = .request(from: node, id: id, command: decoded)
        case "reply":
            guard let code = json["error"]?.stringValue else {
                self = .reply(to: node, id: id, error: nil)
                return
            }
            let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init)
            switch code {
            case "not_a_member":
                guard let user = json["user"]?.stringValue, let cid else { return nil }
                self = .reply(to: node, id: id, error: .notAMember(user: user, cid: cid))
            case "unknown_channel":
                guard let cid else { return nil }
                self = .reply(to: node, id: id, error: .unknownChannel(cid))
            default:
                self = .reply(to: node, id: id, error: .invalidArgument(json["detail"]?.stringValue ?? code))
            }
        default:
            return nil
        }
    }
}
