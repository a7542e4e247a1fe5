import CheckmarkCore

/// A row of `message_edits`: what happened to a message after it was sent (``MessageRevision``), with
/// its current text when an edit changed it. The message's own `messages` row keeps the text it was
/// sent with, which the journal's `send_message` commands and `message.new` events refer to.
package struct MessageEditRow: Sendable, Hashable {
    package var cid: ChannelCID
    package var position: Int
    package var revision: MessageRevision
    /// The current text; nil while it is the one sent.
    package var text: String?

    package init(cid: ChannelCID, position: Int, revision: MessageRevision, text: String?) {
        self.cid = cid
        self.position = position
        self.revision = revision
        self.text = text
    }
}
