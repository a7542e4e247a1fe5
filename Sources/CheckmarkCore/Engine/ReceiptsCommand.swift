/// Everything that can change receipts state. Each is applied with ``ReceiptsEngine/apply(_:at:)``.
public enum ReceiptsCommand: Sendable, Hashable {
    /// Creates or replaces a user (privacy settings included).
    case upsertUser(User)
    /// Changes only the given fields of an existing user.
    case updateUser(UserPatch)
    case createChannelType(ChannelType)
    /// Changes the flags of an existing type; nil leaves a flag as it is.
    case updateChannelType(name: String, readEvents: Bool?, deliveryEvents: Bool?, typingEvents: Bool? = nil, customEvents: Bool? = nil)
    /// Creates a channel with its first members, or does nothing if it exists.
    case createChannel(cid: ChannelCID, createdBy: String?, members: [String])
    case addMembers(cid: ChannelCID, userIDs: [String])
    case removeMembers(cid: ChannelCID, userIDs: [String])
    /// A connection of `userID` opened.
    case connect(connectionID: String, userID: String)
    case disconnect(connectionID: String)
    /// The connection starts receiving the channel's events (members only).
    case watch(connectionID: String, cid: ChannelCID)
    case stopWatching(connectionID: String, cid: ChannelCID)
    case sendMessage(cid: ChannelCID, userID: String, draft: MessageDraft)
    /// Gives a message a new text; `by` is the user editing it, nil for the server.
    case updateMessage(cid: ChannelCID, messageID: String, text: String, by: String?)
    /// Deletes a message (`hard`: its text erased too); `by` is the user deleting it, nil for the server.
    case deleteMessage(cid: ChannelCID, messageID: String, hard: Bool, by: String?)
    /// `userID` reacts to a message (with `enforceUnique`, instead of its other reactions there).
    case sendReaction(cid: ChannelCID, messageID: String, userID: String, type: String, score: Int, enforceUnique: Bool)
    /// `userID` takes back its reaction of `type`.
    case deleteReaction(cid: ChannelCID, messageID: String, userID: String, type: String)
    /// Read up to and including `messageID`, or everything when nil.
    case markRead(cid: ChannelCID, userID: String, messageID: String?)
    /// Several channels at once (`read_by_channel`), or, with nil, every channel of the user.
    case markReadMany(userID: String, channels: [ChannelReadTarget]?)
    /// Reads the thread of `parentID` up to its newest reply (Stream's mark read with `thread_id`).
    case markThreadRead(cid: ChannelCID, userID: String, parentID: String)
    case markUnread(cid: ChannelCID, userID: String, from: UnreadTarget)
    /// Per channel, the newest message delivered to the user.
    case markDelivered(userID: String, latest: [DeliveredTarget])
}

extension ReceiptsCommand {
    /// The message an edit or a delete changes; nil for every other command.
    public var revisedMessage: (cid: ChannelCID, messageID: String)? {
        switch self {
        case .updateMessage(let cid, let messageID, _, _), .deleteMessage(let cid, let messageID, _, _):
            (cid, messageID)
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers, .removeMembers, .connect,
             .disconnect, .watch, .stopWatching, .sendMessage, .sendReaction, .deleteReaction, .markRead, .markReadMany, .markThreadRead,
             .markUnread, .markDelivered:
            nil
        }
    }
}

/// One channel of a mark-several-read.
public struct ChannelReadTarget: Sendable, Hashable {
    public var cid: ChannelCID
    public var messageID: String?
    public init(cid: ChannelCID, messageID: String?) {
        self.cid = cid
        self.messageID = messageID
    }
}

/// Where a mark unread starts.
public enum UnreadTarget: Sendable, Hashable {
    case message(String)
    /// The first channel message created at or after this time.
    case timestamp(Timestamp)
}

/// One entry of `latest_delivered_messages`.
public struct DeliveredTarget: Sendable, Hashable {
    public var cid: ChannelCID
    public var messageID: String
    public init(cid: ChannelCID, messageID: String) {
        self.cid = cid
        self.messageID = messageID
    }
}
