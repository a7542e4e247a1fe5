import CheckmarkCore

/// What a command is about: its op, channels, users, and a short detail.
struct CommandFacts {
    var op: String
    var channels: [ChannelCID] = []
    var users: Set<String> = []
    var detail: String?

    init(_ command: ReceiptsCommand) {
        op = CommandCodec.op(command)
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
        case .updateChannelType(let name, _, _, _, _): detail = name
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
        case .updateMessage(let cid, let messageID, _, let editor), .deleteMessage(let cid, let messageID, _, let editor):
            channels = [cid]
            users = editor.map { [$0] } ?? []
            detail = "message=\(messageID)"
        case .sendReaction(let cid, let messageID, let user, let type, _, _), .deleteReaction(let cid, let messageID, let user, let type):
            channels = [cid]
            users = [user]
            detail = "message=\(messageID) type=\(type)"
        case .markRead(let cid, let user, let messageID):
            channels = [cid]
            users = [user]
            detail = messageID.map { "up_to=\($0)" }
        case .markThreadRead(let cid, let user, let parentID):
            channels = [cid]
            users = [user]
            detail = "thread=\(parentID)"
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
