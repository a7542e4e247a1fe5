/// Texts of archived messages (``MessageLog``) that storage gave back for one answer: a page of
/// messages reaching past a channel's window is written with them. Empty for an answer that needs none.
public struct ArchivedTexts: Sendable {
    private var texts: [ChannelCID: [Int: String]] = [:]

    public init() {}

    /// The text of the message at `position` of `cid`, if it was read.
    public func text(of cid: ChannelCID, at position: Int) -> String? {
        texts[cid]?[position]
    }

    public mutating func insert(_ text: String, of cid: ChannelCID, at position: Int) {
        texts[cid, default: [:]][position] = text
    }

    /// The message at `position` of `channel`'s log: from memory, or with its text read back; nil when
    /// neither has it.
    public func message(at position: Int, of messages: MessageLog) -> Message? {
        if let held = messages.message(at: position) { return held }
        return text(of: messages.cid, at: position).map { messages.message(at: position, text: $0) }
    }

    /// Checks that every message at `positions` of `messages` can be written.
    /// - Throws: ``Missing`` naming those whose texts must be read from storage first.
    public func require(_ positions: ArraySlice<Int>, of messages: MessageLog) throws(Missing) {
        var missing: [Int] = []
        for position in positions where !messages.holdsText(at: position) && text(of: messages.cid, at: position) == nil {
            missing.append(position)
        }
        if !missing.isEmpty { throw Missing(cid: messages.cid, positions: missing) }
    }

    /// An answer needs archived texts that were not read yet: the reader reads them from storage and
    /// writes the answer again.
    public struct Missing: Error, Sendable, Hashable {
        public var cid: ChannelCID
        public var positions: [Int]

        public init(cid: ChannelCID, positions: [Int]) {
            self.cid = cid
            self.positions = positions
        }
    }
}
