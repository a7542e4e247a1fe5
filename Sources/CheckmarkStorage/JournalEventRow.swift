/// A row of `journal_events`: an event with its command's sequence and what the store writes of it.
/// Which embedded object is kept once (``JournalEvent/storedMessage``, ``JournalEvent/storedChannel``)
/// and the payload without it are worked out once per event when it is made for writing, not once
/// per column that reads them.
struct JournalEventRow {
    var commandSeq: Int64
    var event: JournalEvent
    /// The message object kept once instead of in ``payload``.
    var storedMessage: JournaledMessage?
    /// The channel object kept once instead of in ``payload``.
    var storedChannel: JournaledChannel?
    /// The JSON the `payload` column holds: the event's, without the object kept once.
    var payload: [UInt8]

    /// The row that writes `event`.
    init(commandSeq: Int64, writing event: JournalEvent) {
        self.commandSeq = commandSeq
        storedMessage = event.storedMessage
        storedChannel = event.storedChannel
        if let message = storedMessage {
            payload = message.cut(event.json)
        } else if let channel = storedChannel {
            payload = channel.cut(event.json)
        } else {
            payload = event.json
        }
        self.event = event
    }

    /// A row read back: `event` as loaded (its JSON is the payload, its objects still to attach).
    /// Such a row is for reading only: its objects are not in its JSON, so it is never written again
    /// nor given to ``channelObjects(of:)``.
    init(commandSeq: Int64, read event: JournalEvent) {
        self.commandSeq = commandSeq
        storedMessage = event.message
        storedChannel = event.channel
        payload = event.json
        self.event = event
    }

    /// The rows that write the events of `entries`, in order.
    static func writing(_ entries: [JournalEntry]) -> [JournalEventRow] {
        var rows: [JournalEventRow] = []
        rows.reserveCapacity(entries.reduce(0) { $0 + $1.events.count })
        for entry in entries {
            for event in entry.events { rows.append(JournalEventRow(commandSeq: entry.seq, writing: event)) }
        }
        return rows
    }

    /// The channel objects `rows` are the first to carry (``JournaledChannel``): a row that refers to
    /// an object from an earlier event stores none.
    static func channelObjects(of rows: [JournalEventRow]) -> [StateTables.ChannelObjectRow] {
        var objects: [StateTables.ChannelObjectRow] = []
        for row in rows {
            guard let channel = row.storedChannel, let cid = row.event.cid, channel.since == row.event.channelSeq else { continue }
            objects.append((cid, channel.since, Array(channel.object(in: row.event.json))))
        }
        return objects
    }
}
