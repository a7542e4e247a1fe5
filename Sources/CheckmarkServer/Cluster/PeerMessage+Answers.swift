import CheckmarkCore

/// How a ``ForwardAnswer`` travels in a peer message: `answer` says which, and the fields that follow
/// carry its parts (every refusal whole, so that the asking node answers its client exactly as the
/// owner would have).
extension PeerMessage {
    static func write(_ answer: ForwardAnswer, into w: inout JSONWriter) {
        switch answer {
        case .applied(.user), .applied(.channelType):
            // Not the result of any command a shard's owner is asked to apply (``CommandRoute``).
            w.field("answer", "failed")
            w.field("detail", "the owner's result cannot be forwarded")
        case .applied(let result):
            w.field("answer", "applied")
            switch result {
            case .none, .user, .channelType:
                break
            case .message(let message):
                writeMessage(message, into: &w)
            case .reaction(let message, let reaction):
                writeMessage(message, into: &w)
                w.field("reaction_user", reaction.userID)
                w.field("reaction_type", reaction.type)
                w.field("score", reaction.score)
                w.field("reacted_at", Int(reaction.createdAt.rawValue))
                w.field("reaction_updated_at", Int(reaction.updatedAt.rawValue))
            case .channel(let cid, let created):
                w.field("cid", cid.description)
                w.field("created", created)
            }
        case .unchanged:
            w.field("answer", "unchanged")
        case .refused(let error):
            w.field("answer", "refused")
            writeError(error, into: &w)
        case .notOwner:
            w.field("answer", "not_owner")
        case .failed(let reason):
            w.field("answer", "failed")
            w.field("detail", reason)
        }
    }

    /// A message of an answer, without its text (the asking node has a sent or edited one in its
    /// command), revision and reactions: the answer the owner made carries those.
    private static func writeMessage(_ message: Message, into w: inout JSONWriter) {
                w.field("message_id", message.id)
                w.field("cid", message.cid.description)
                w.field("user", message.userID)
                w.field("message_kind", message.kind.rawValue)
                w.field("created_at", Int(message.createdAt.rawValue))
                w.fieldIfPresent("parent_id", message.parentID)
                w.field("show_in_channel", message.showInChannel)
                w.field("silent", message.silent)
    }

    static func answer(_ json: JSONValue) -> ForwardAnswer? {
        switch json["answer"]?.stringValue {
        case "applied":
            if let id = json["message_id"]?.stringValue {
                guard let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init), let user = json["user"]?.stringValue,
                      let kind = json["message_kind"]?.stringValue.flatMap(Message.Kind.init(rawValue:)),
                      let createdAt = json["created_at"]?.intValue else { return nil }
                let message = Message(
                    id: id, cid: cid, userID: user, text: "", kind: kind, createdAt: Timestamp(rawValue: Int64(createdAt)),
                    parentID: json["parent_id"]?.stringValue, showInChannel: json["show_in_channel"]?.boolValue ?? false,
                    silent: json["silent"]?.boolValue ?? false)
                if let reactor = json["reaction_user"]?.stringValue {
                    guard let type = json["reaction_type"]?.stringValue, let score = json["score"]?.intValue,
                          let at = json["reacted_at"]?.intValue, let updated = json["reaction_updated_at"]?.intValue else { return nil }
                    return .applied(.reaction(message, Reaction(userID: reactor, type: type, score: score, createdAt: Timestamp(rawValue: Int64(at)),
                                                                updatedAt: Timestamp(rawValue: Int64(updated)))))
                }
                return .applied(.message(message))
            }
            if let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init) {
                return .applied(.channel(cid, created: json["created"]?.boolValue ?? false))
            }
            return .applied(.none)
        case "unchanged": return .unchanged
        case "refused": return error(json).map(ForwardAnswer.refused)
        case "not_owner": return .notOwner
        case "failed": return .failed(json["detail"]?.stringValue ?? "")
        default: return nil
        }
    }

    /// A refusal, whole: its case (`error`), its text and its other parts.
    static func writeError(_ error: ReceiptsError, into w: inout JSONWriter) {
        switch error {
        case .unknownUser(let id): w.field("error", "unknown_user"); w.field("a", id)
        case .unknownChannel(let cid): w.field("error", "unknown_channel"); w.field("cid", cid.description)
        case .unknownChannelType(let name): w.field("error", "unknown_channel_type"); w.field("a", name)
        case .unknownMessage(let id): w.field("error", "unknown_message"); w.field("a", id)
        case .unknownConnection(let id): w.field("error", "unknown_connection"); w.field("a", id)
        case .unknownReaction(let user, let type, let messageID):
            w.field("error", "unknown_reaction"); w.field("user", user); w.field("a", type); w.field("message_id", messageID)
        case .notAMember(let user, let cid): w.field("error", "not_a_member"); w.field("user", user); w.field("cid", cid.description)
        case .notAllowed(let text): w.field("error", "not_allowed"); w.field("a", text)
        case .messageTooOld(let id): w.field("error", "message_too_old"); w.field("a", id)
        case .duplicate(let what): w.field("error", "duplicate"); w.field("a", what)
        case .tooManyWatchedChannels(let limit): w.field("error", "too_many_watched_channels"); w.field("n", limit)
        case .tooManyConnections(let user, let limit): w.field("error", "too_many_connections"); w.field("user", user); w.field("n", limit)
        case .invalidArgument(let text): w.field("error", "invalid_argument"); w.field("a", text)
        case .archivedText(let cid, let position): w.field("error", "archived_text"); w.field("cid", cid.description); w.field("n", position)
        case .channelsNotLoaded(let cids):
            w.field("error", "channels_not_loaded")
            w.field("a", cids.map(\.description).joined(separator: ","))
        }
    }

    static func error(_ json: JSONValue) -> ReceiptsError? {
        let a = json["a"]?.stringValue
        let cid = json["cid"]?.stringValue.flatMap(ChannelCID.init)
        let n = json["n"]?.intValue
        let user = json["user"]?.stringValue
        switch json["error"]?.stringValue {
        case "unknown_user": return a.map(ReceiptsError.unknownUser)
        case "unknown_channel": return cid.map(ReceiptsError.unknownChannel)
        case "unknown_channel_type": return a.map(ReceiptsError.unknownChannelType)
        case "unknown_message": return a.map(ReceiptsError.unknownMessage)
        case "unknown_connection": return a.map(ReceiptsError.unknownConnection)
        case "unknown_reaction":
            guard let user, let a, let messageID = json["message_id"]?.stringValue else { return nil }
            return .unknownReaction(user: user, type: a, messageID: messageID)
        case "not_a_member":
            guard let user, let cid else { return nil }
            return .notAMember(user: user, cid: cid)
        case "not_allowed": return a.map(ReceiptsError.notAllowed)
        case "message_too_old": return a.map(ReceiptsError.messageTooOld)
        case "duplicate": return a.map(ReceiptsError.duplicate)
        case "too_many_watched_channels": return n.map { .tooManyWatchedChannels(limit: $0) }
        case "too_many_connections":
            guard let user, let n else { return nil }
            return .tooManyConnections(user: user, limit: n)
        case "invalid_argument": return a.map(ReceiptsError.invalidArgument)
        case "archived_text":
            guard let cid, let n else { return nil }
            return .archivedText(cid: cid, position: n)
        case "channels_not_loaded":
            return .channelsNotLoaded((a ?? "").split(separator: ",").compactMap { ChannelCID(String($0)) })
        default: return nil
        }
    }
}
