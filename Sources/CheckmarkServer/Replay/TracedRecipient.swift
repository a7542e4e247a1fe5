import CheckmarkCore

/// A recipient as a trace records it: by connection id (handles are the engine's and do not outlive
/// it), with the user and the counts its copy of the event carried.
package struct TracedRecipient: Sendable, Hashable {
    package var connectionID: String
    package var userID: String
    package var counts: UnreadCounts?

    package init(connectionID: String, userID: String, counts: UnreadCounts?) {
        self.connectionID = connectionID
        self.userID = userID
        self.counts = counts
    }

    package init(_ recipient: Recipient) {
        self.init(connectionID: recipient.connectionID, userID: recipient.userID, counts: recipient.counts)
    }
}
