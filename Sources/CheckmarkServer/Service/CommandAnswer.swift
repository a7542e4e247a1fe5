import CheckmarkCore
import CheckmarkWire

/// What a REST call answers after the command it submitted is durable, made from the command's
/// outcome and the state its commit left: on the node that applied it. A command forwarded to its
/// shard's owner carries it, and the owner sends the answer back with the result, so that the
/// asking node need not catch up with the owner's commit before it can answer.
package enum CommandAnswer: Sendable, Equatable {
    /// `{"message": ...}`: the message a `send_message` made.
    case message
    /// `{"event": ...}`: `reader`'s read state of `cid` after the call, in `message.read`'s shape
    /// (of the thread of message `thread`, when given).
    case readState(cid: ChannelCID, reader: String, thread: String?)

    /// The answer's JSON.
    /// - Throws: ``ReceiptsError/notAMember(user:cid:)`` when the reader is not a member (any more),
    ///   ``ReceiptsError/channelsNotLoaded(_:)`` and other engine errors of reading `cid`.
    func body(_ outcome: ReceiptsOutcome, engine: ReceiptsEngine) throws -> [UInt8] {
        switch self {
        case .message:
            return ResultJSON.message(outcome, engine: engine)
        case .readState(let cid, let reader, let thread):
            let channel = try engine.channel(cid)
            guard let user = engine.users[reader], var read = channel.members[reader]?.read else {
                throw ReceiptsError.notAMember(user: reader, cid: cid)
            }
            var threadID: String?
            if let thread, let threadRead = channel.threads[thread]?.reads[reader] {
                threadID = thread
                read.lastReadMessageID = threadRead.lastReadMessageID
                read.lastRead = threadRead.lastRead
            }
            return RESTResultJSON.readEvent(cid: cid, user: user, read: read, threadID: threadID)
        }
    }
}
