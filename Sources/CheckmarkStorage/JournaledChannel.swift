import CheckmarkCore

/// Where a journaled event's channel object is, when the journal keeps that object once for the
/// events that carry the same bytes instead of repeating it in each (`notification.mark_read` of a
/// channel read: the channel with its type's config, about three quarters of the event).
///
/// The object is a row of `journal_channels` keyed by the event's channel and ``since``: the
/// `channel_seq` of the first event that carried those bytes. The event's ``JournalEvent/json`` is
/// whole going into storage and coming out of it: the store writes it without the ``length`` bytes at
/// ``offset`` (and the object row, unless the same key is stored already), and puts them back when
/// it reads the event.
///
/// References are monotonic: within a channel, a later event never refers to an older object than an
/// earlier event does (``ChannelObjectLedger`` keeps it so). Retention relies on that: it removes a
/// channel's objects older than the newest one at or before the channel's oldest event left.
package struct JournaledChannel: Sendable, Hashable {
    /// The `channel_seq` of the first event that carried the object: its key in its channel.
    package var since: Int64
    /// Where the channel object starts in the event's whole JSON, in bytes.
    package var offset: Int
    /// The channel object's length in bytes.
    package var length: Int

    package init(since: Int64, offset: Int, length: Int) {
        self.since = since
        self.offset = offset
        self.length = length
    }

    /// Whether `json`, an event's whole JSON, has an object at ``offset`` of ``length`` bytes.
    package func fits(_ json: [UInt8]) -> Bool { EmbeddedObject.fits(json, offset: offset, length: length) }

    /// `json` without the channel object: what the store writes.
    package func cut(_ json: [UInt8]) -> [UInt8] { EmbeddedObject.cut(json, offset: offset, length: length) }

    /// The channel object's bytes in `json`, an event's whole JSON.
    package func object(in json: [UInt8]) -> ArraySlice<UInt8> { json[offset..<(offset + length)] }
}

extension JournaledChannel {
    /// The key of a stored channel object.
    package struct Key: Hashable, Sendable {
        package var cid: ChannelCID
        package var since: Int64
    }

    /// The objects that `events`, read back with their payload cut, need (per channel, by ``since``).
    static func keys(in events: [JournalEvent]) -> [ChannelCID: Set<Int64>] {
        var keys: [ChannelCID: Set<Int64>] = [:]
        for event in events {
            guard let channel = event.channel, let cid = event.cid else { continue }
            keys[cid, default: []].insert(channel.since)
        }
        return keys
    }

    /// Puts each event's channel object from `objects` back at its place, making its JSON whole.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` when an event's object is not stored, is not of
    ///   the length the event says, or its place is past the event's JSON.
    static func attach(_ objects: [ChannelCID: [Int64: [UInt8]]], to events: inout [JournalEvent]) throws(StorageError) {
        for index in events.indices {
            guard let channel = events[index].channel, let cid = events[index].cid else { continue }
            let seq = events[index].seq
            guard let object = objects[cid]?[channel.since] else {
                throw .corrupt(path: "", reason: "journal event \(seq) refers to channel object \(channel.since) of \(cid), which is not stored")
            }
            let cut = events[index].json
            guard object.count == channel.length, channel.offset >= 0, channel.offset <= cut.count else {
                throw .corrupt(path: "", reason: "journal event \(seq): channel object \(channel.since) of \(cid) is \(object.count) bytes at "
                                   + "\(channel.offset) of \(cut.count), not \(channel.length)")
            }
            var whole: [UInt8] = []
            whole.reserveCapacity(cut.count + object.count)
            whole.append(contentsOf: cut[..<channel.offset])
            whole.append(contentsOf: object)
            whole.append(contentsOf: cut[channel.offset...])
            events[index].json = whole
        }
    }
}
