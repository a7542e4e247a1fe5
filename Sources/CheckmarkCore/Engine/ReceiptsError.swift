/// Why a command was refused. Stable codes; the shells map them to HTTP statuses and WebSocket
/// replies in one place.
public enum ReceiptsError: Error, Sendable, Hashable, CustomStringConvertible {
    case unknownUser(String)
    case unknownChannel(ChannelCID)
    case unknownChannelType(String)
    case unknownMessage(String)
    case unknownConnection(String)
    /// The user has no reaction of that type on the message.
    case unknownReaction(user: String, type: String, messageID: String)
    /// The user is not a member of the channel.
    case notAMember(user: String, cid: ChannelCID)
    /// The channel type has the feature off (`custom_events`); the text says which.
    case notAllowed(String)
    /// Mark unread reaches only the channel's last ``ReceiptsEngine/markUnreadWindow`` messages.
    case messageTooOld(String)
    case duplicate(String)
    /// The connection watches as many channels as one may (`max_watched_channels`).
    case tooManyWatchedChannels(limit: Int)
    /// The user has as many open connections as one may (`max_connections_per_user`).
    case tooManyConnections(user: String, limit: Int)
    /// Anything else malformed; the text says what.
    case invalidArgument(String)
    /// Not a refusal of the command: it needs the text of an archived message (``MessageLog``). The
    /// service reads it from storage, hands it to ``ReceiptsEngine/recallText(_:of:at:)`` and applies
    /// the command again; reaching a client, it means storage could not give the text back.
    case archivedText(cid: ChannelCID, position: Int)
    /// Not a refusal of the command: it needs channels that are dormant (``DormantChannel``). The
    /// service loads them from storage, hands each to ``ReceiptsEngine/install(_:)`` and applies the
    /// command again (nothing changed meanwhile); reaching a client, it means storage could not load them.
    case channelsNotLoaded([ChannelCID])

    /// A stable, machine-readable code.
    public var code: String {
        switch self {
        case .unknownUser: "unknown_user"
        case .unknownChannel: "unknown_channel"
        case .unknownChannelType: "unknown_channel_type"
        case .unknownMessage: "unknown_message"
        case .unknownConnection: "unknown_connection"
        case .unknownReaction: "unknown_reaction"
        case .notAMember: "not_a_member"
        case .notAllowed: "not_allowed"
        case .messageTooOld: "message_too_old"
        case .duplicate: "duplicate"
        case .tooManyWatchedChannels: "too_many_watched_channels"
        case .tooManyConnections: "too_many_connections"
        case .invalidArgument: "invalid_argument"
        case .archivedText, .channelsNotLoaded: "storage_unavailable"
        }
    }

    public var description: String {
        switch self {
        case .unknownUser(let id): "user \(id) does not exist"
        case .unknownChannel(let cid): "channel \(cid) does not exist"
        case .unknownChannelType(let name): "channel type \(name) does not exist"
        case .unknownMessage(let id): "message \(id) does not exist"
        case .unknownConnection(let id): "connection \(id) does not exist"
        case .unknownReaction(let user, let type, let messageID): "user \(user) has no \(type) reaction on message \(messageID)"
        case .notAMember(let user, let cid): "user \(user) is not a member of channel \(cid)"
        case .notAllowed(let text): text
        case .messageTooOld(let id): "message \(id) is not among the channel's last \(ReceiptsEngine.markUnreadWindow) messages"
        case .duplicate(let what): "\(what) already exists"
        case .tooManyWatchedChannels(let limit): "a connection may watch at most \(limit) channels"
        case .tooManyConnections(let user, let limit): "user \(user) has \(limit) connections, the limit per user"
        case .invalidArgument(let text): text
        case .archivedText(let cid, let position): "the text of message \(position) of \(cid) is in storage and could not be read"
        case .channelsNotLoaded(let cids): "channels \(cids.map(\.description).joined(separator: ", ")) are in storage and could not be loaded"
        }
    }
}
