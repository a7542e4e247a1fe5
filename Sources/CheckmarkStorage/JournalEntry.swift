import CheckmarkCore

/// One accepted command in the journal, with the events it produced. `seq` is the global sequence:
/// consecutive, starting at 1, no gaps; `streamSeq` is the same within the entry's stream
/// (``JournalStream``).
package struct JournalEntry: Sendable, Hashable {
    package var seq: Int64
    package var stream: JournalStream
    package var streamSeq: Int64
    /// When the core applied it.
    package var at: Timestamp
    package var command: ReceiptsCommand
    package var events: [JournalEvent]
    /// For a `send_message`, the position of the message it made in its channel: the journal then
    /// keeps the command without the text, which the message's row holds, and reads it back whole.
    package var messagePosition: Int?

    /// Without a stream, an entry of the cluster stream numbered there as in the journal (as the
    /// entries written before there were streams are).
    package init(seq: Int64, stream: JournalStream = .cluster, streamSeq: Int64? = nil, at: Timestamp, command: ReceiptsCommand,
                 events: [JournalEvent], messagePosition: Int? = nil) {
        self.seq = seq
        self.stream = stream
        self.streamSeq = streamSeq ?? seq
        self.at = at
        self.command = command
        self.events = events
        self.messagePosition = messagePosition
    }

    /// The command as the journal keeps it: a `send_message` whose message's row holds its text
    /// (``messagePosition``) without that text.
    var storedCommand: ReceiptsCommand {
        guard messagePosition != nil, case .sendMessage(let cid, let userID, var draft) = command else { return command }
        draft.text = ""
        return .sendMessage(cid: cid, userID: userID, draft: draft)
    }

    /// Per channel, the positions of the messages whose texts `entries` read back leave out.
    static func textPositions(in entries: [JournalEntry]) -> [ChannelCID: [Int]] {
        var positions: [ChannelCID: [Int]] = [:]
        for entry in entries {
            guard let position = entry.messagePosition, case .sendMessage(let cid, _, _) = entry.command else { continue }
            positions[cid, default: []].append(position)
        }
        return positions
    }

    /// Gives each `send_message` read back the text its message's row holds (`messages`, per channel
    /// by position). - Throws: ``StorageError/corrupt(path:reason:)`` when that message is not stored.
    static func restoreTexts(_ messages: [ChannelCID: [Int: Message]], in entries: inout [JournalEntry]) throws(StorageError) {
        for index in entries.indices {
            guard let position = entries[index].messagePosition, case .sendMessage(let cid, _, _) = entries[index].command else { continue }
            try entries[index].restoreText(messages[cid]?[position]?.text)
        }
    }

    /// Gives a `send_message` read back without its text (``messagePosition``) `text`, the text its
    /// message's row holds (nil: no such row). Any other entry stays as it is.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` when the message is not stored.
    mutating func restoreText(_ text: String?) throws(StorageError) {
        guard let position = messagePosition, case .sendMessage(let cid, let userID, var draft) = command else { return }
        guard let text else {
            throw .corrupt(path: "", reason: "journal command \(seq) sent message \(position) of \(cid), which is not stored")
        }
        draft.text = text
        command = .sendMessage(cid: cid, userID: userID, draft: draft)
        messagePosition = nil
    }
}

/// One event in the journal: its global event sequence, and for channel events the channel's own
/// sequence (consecutive per channel from 1), so a client can resume one channel from where it was.
package struct JournalEvent: Sendable, Hashable {
    package var seq: Int64
    package var cid: ChannelCID?
    package var channelSeq: Int64?
    package var type: String
    /// Who the event is for; nil for events journaled before the audience was kept (they cannot be
    /// resumed from).
    package var audience: EventAudience?
    /// The event's JSON as shared by all recipients (per-recipient counts left out); without its
    /// message object when read back with a ``message``.
    package var json: [UInt8]
    /// The message object kept once in storage instead of in ``json`` (``JournaledMessage``).
    package var message: JournaledMessage?
    /// The channel object kept once in storage for the events that carry the same bytes
    /// (``JournaledChannel``); ``json`` is whole with it, going in and read back.
    package var channel: JournaledChannel?
    /// Where the entry whose command made the event is in its stream, as storage reads it back
    /// (``ReceiptsStore/channelEvents(_:after:through:limit:maxBytes:)``, ``ReceiptsStore/journal(after:limit:)``;
    /// nil going in, and when that entry is no longer stored): for a resume to tell which events a
    /// connection received live.
    package var entry: StreamPosition?

    package init(seq: Int64, cid: ChannelCID?, channelSeq: Int64?, type: String, audience: EventAudience?, json: [UInt8],
                 message: JournaledMessage? = nil, channel: JournaledChannel? = nil, entry: StreamPosition? = nil) {
        self.seq = seq
        self.cid = cid
        self.channelSeq = channelSeq
        self.type = type
        self.audience = audience
        self.json = json
        self.message = message
        self.channel = channel
        self.entry = entry
    }

    /// The ``message`` the store keeps once: only where it is an event's message object going in
    /// (whole JSON, no message read back) of a channel event.
    var storedMessage: JournaledMessage? {
        guard let message, message.message == nil, cid != nil, message.fits(json) else { return nil }
        return message
    }

    /// The ``channel`` the store keeps once: only for a channel event whose message object is not
    /// kept once too, where the object is in its whole JSON.
    var storedChannel: JournaledChannel? {
        guard let channel, storedMessage == nil, cid != nil, channel.fits(json) else { return nil }
        return channel
    }
}

extension JournalEntry {
    /// Where this entry is in its stream.
    package var position: StreamPosition { StreamPosition(stream: stream, number: streamSeq) }

    /// Adds `event`, read back from storage, to this entry's events, telling it where its entry is.
    package mutating func append(_ event: JournalEvent) {
        var event = event
        event.entry = position
        events.append(event)
    }
}
