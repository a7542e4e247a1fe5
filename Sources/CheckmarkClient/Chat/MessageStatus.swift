/// How one of the user's own messages stands (contract: States of a message): the gray check, the
/// double check, the blue double check.
public struct MessageStatus: Sendable, Hashable {
    public enum State: Sendable, Hashable, Comparable {
        /// Stored by the server; nobody else has it yet.
        case sent
        /// At least one other member has it.
        case delivered
        /// At least one other member has read it.
        case read
    }

    public var state: State
    /// Other members whose `last_read` is at or after the message, by id.
    public var readBy: [String]
    /// Other members who have it (delivered or read), by id.
    public var deliveredTo: [String]
}
