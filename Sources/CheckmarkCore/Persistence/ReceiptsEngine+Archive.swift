extension ReceiptsEngine {
    /// Storage confirmed each channel's messages below the given count (a committed batch, or entries
    /// another node committed): their texts older than ``messageWindow`` leave memory
    /// (``MessageLog/markDurable(count:keepingNewest:)``). Unknown channels are skipped.
    package mutating func markMessagesDurable(_ counts: [ChannelCID: Int]) {
        for (cid, count) in counts {
            guard let index = channels.index(forKey: cid) else { continue }
            channels.values[index].messages.markDurable(count: count, keepingNewest: messageWindow)
        }
    }

    /// Storage confirmed these edits (per channel, the position of each edited message and the number
    /// of the edit it stored, ``MessageLog/pendingEdit(at:)``): archived messages' texts leave memory.
    package mutating func markEditsDurable(_ edits: [ChannelCID: [Int: Int]]) {
        for (cid, stored) in edits {
            guard let index = channels.index(forKey: cid) else { continue }
            for (position, edit) in stored { channels.values[index].messages.markEditDurable(at: position, edit: edit) }
        }
    }

    /// Storage confirmed every message held now (a restored engine).
    package mutating func markAllMessagesDurable() {
        for index in channels.indices {
            let count = channels.values[index].messages.count
            channels.values[index].messages.markDurable(count: count, keepingNewest: messageWindow)
        }
    }

    /// The text storage gave back for the archived message at `position` of `cid`, which a command
    /// refused with ``ReceiptsError/archivedText(cid:position:)`` needs (a thread's title). A channel
    /// holds at most ``messageWindow`` such texts besides its window's.
    package mutating func recallText(_ text: String, of cid: ChannelCID, at position: Int) {
        guard let index = channels.index(forKey: cid), position < channels.values[index].messages.count else { return }
        channels.values[index].messages.recall(text, at: position, keepingAtMost: messageWindow)
    }
}
