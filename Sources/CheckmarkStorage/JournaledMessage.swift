import CheckmarkCore

/// Where a journaled event's message object was, when the journal keeps that object once, in the
/// message's own `messages` row, instead of repeating it in the event's JSON (`message.new`: the
/// message with its sender, about two thirds of the event).
///
/// Going into storage, the event's ``JournalEvent/json`` is whole and ``message`` is nil: the store
/// writes the JSON without the ``length`` bytes at ``offset``. Coming out, the JSON lacks them and
/// ``message`` is the stored message they are written again from (`StreamJSON.wholeJSON(of:)`), byte
/// for byte: the sender's JSON in the message object is the event's `user`, which the event keeps.
package struct JournaledMessage: Sendable, Hashable {
    /// The message's place in the event's channel: its `messages` row.
    package var position: Int
    /// Where the message object starts in the event's whole JSON, in bytes.
    package var offset: Int
    /// The message object's length in bytes.
    package var length: Int
    /// The stored message, on events read back; nil on events going in.
    package var message: Message? {
        get { read?.message }
        set { read = newValue.map(ReadMessage.init) }
    }

    /// Out of line, so that events (which the store's writes copy per column) stay small.
    private var read: ReadMessage?

    private final class ReadMessage: Sendable, Hashable {
        let message: Message

        init(_ message: Message) { self.message = message }

        static func == (a: ReadMessage, b: ReadMessage) -> Bool { a.message == b.message }
        func hash(into hasher: inout Hasher) { hasher.combine(message) }
    }

    package init(position: Int, offset: Int, length: Int, message: Message? = nil) {
        self.position = position
        self.offset = offset
        self.length = length
        self.message = message
    }

    /// Whether `json`, an event's whole JSON, has a message object at ``offset`` of ``length`` bytes.
    package func fits(_ json: [UInt8]) -> Bool { EmbeddedObject.fits(json, offset: offset, length: length) }

    /// `json` without the message object: what the store writes.
    package func cut(_ json: [UInt8]) -> [UInt8] { EmbeddedObject.cut(json, offset: offset, length: length) }
}

extension JournaledMessage {
    /// Per channel, the positions of the messages that `events` read back keep once.
    static func positions(in events: [JournalEvent]) -> [ChannelCID: [Int]] {
        var positions: [ChannelCID: [Int]] = [:]
        for event in events {
            guard let message = event.message, let cid = event.cid else { continue }
            positions[cid, default: []].append(message.position)
        }
        return positions
    }

    /// Gives each event read back its stored message from `messages` (per channel, by position).
    /// - Throws: ``StorageError/corrupt(path:reason:)`` when an event's message is not stored: retention
    ///   never removes messages, so the database lost it.
    static func attach(_ messages: [ChannelCID: [Int: Message]], to events: inout [JournalEvent]) throws(StorageError) {
        for index in events.indices {
            guard let reference = events[index].message, let cid = events[index].cid else { continue }
            guard let message = messages[cid]?[reference.position] else {
                throw .corrupt(path: "", reason: "journal event \(events[index].seq) refers to message \(reference.position) of \(cid), which is not stored")
            }
            events[index].message?.message = message
        }
    }
}
