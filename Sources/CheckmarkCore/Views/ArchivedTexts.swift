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

    /// These texts and `other`'s.
    public func adding(_ other: ArchivedTexts) -> ArchivedTexts {
        var all = self
        for (cid, texts) in other.texts { all.texts[cid, default: [:]].merge(texts) { _, new in new } }
        return all
    }

    /// Whether `missing` names a text not read yet.
    public func lacksAny(of missing: Missing) -> Bool {
        missing.positions.contains { cid, positions in positions.contains { text(of: cid, at: $0) == nil } }
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
    /// writes the answer again. An answer of several channels names all it needs at once.
    public struct Missing: Error, Sendable, Hashable {
        /// Positions by channel.
        public var positions: [ChannelCID: [Int]]

        public init(cid: ChannelCID, positions: [Int]) {
            self.positions = [cid: positions]
        }

        /// Adds what `other` needs.
        public mutating func formUnion(_ other: Missing) {
            for (cid, positions) in other.positions { self.positions[cid, default: []] += positions }
        }
    }
}
