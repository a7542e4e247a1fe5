import CheckmarkCore

/// The JSON of channel objects recently written into events (`ChannelResponse` with its config, as
/// ``StreamJSON/write(channel:into:)`` writes it), so that a channel is not encoded again for every
/// read confirmation: each `notification.mark_read` of a channel read carries it.
///
/// Holds at most ``capacity`` channels, each of at most ``maxChannelBytes`` of JSON (a larger one is
/// written afresh every time); a channel that comes when it is full empties it first: at most 64 MiB
/// of JSON (typically 1.3 KB a channel). A stored form is used only for a summary whose every field
/// has the same bytes as the one it was written from (strings byte for byte, the creator as
/// ``UserJSONCache`` compares users), so a channel whose member count, last message or type changed
/// is written afresh.
public struct ChannelJSONCache: Sendable {
    /// Most channels kept: more than a node's channels active at once.
    public static let capacity = 16_384
    /// Largest channel JSON kept, in bytes.
    public static let maxChannelBytes = 4096

    private var entries: [ChannelCID: Entry] = [:]

    /// A class, so that a look-up retains one reference instead of copying every field.
    private final class Entry: Sendable {
        let channel: ChannelSummary
        let json: [UInt8]

        init(channel: ChannelSummary, json: [UInt8]) {
            self.channel = channel
            self.json = json
        }
    }

    public init() {}

    /// The JSON object of `channel`, from the cache when the same summary was written before.
    public mutating func json(for channel: ChannelSummary) -> [UInt8] {
        if let entry = entries[channel.cid], Self.sameBytes(entry.channel, channel) { return entry.json }
        var writer = JSONWriter(capacity: 2048)
        StreamJSON.write(channel: channel, into: &writer)
        guard writer.count <= Self.maxChannelBytes else { return writer.bytes }
        if entries.count >= Self.capacity, entries[channel.cid] == nil { entries.removeAll(keepingCapacity: true) }
        entries[channel.cid] = Entry(channel: channel, json: writer.bytes)
        return writer.bytes
    }

    /// How many channels the cache holds.
    package var keptChannels: Int { entries.count }

    /// Whether the two summaries write the same JSON: every field the same, strings byte for byte.
    static func sameBytes(_ a: ChannelSummary, _ b: ChannelSummary) -> Bool {
        UserJSONCache.same(a.cid.type, b.cid.type) && UserJSONCache.same(a.cid.id, b.cid.id)
            && UserJSONCache.same(a.createdBy, b.createdBy)
            && sameCreator(a.creator, b.creator) && a.createdAt == b.createdAt && a.lastMessageAt == b.lastMessageAt
            && a.memberCount == b.memberCount && UserJSONCache.same(a.type.name, b.type.name) && a.type.readEvents == b.type.readEvents
            && a.type.deliveryEvents == b.type.deliveryEvents && a.type.typingEvents == b.type.typingEvents
            && a.type.customEvents == b.type.customEvents && a.type.createdAt == b.type.createdAt
            && a.type.updatedAt == b.type.updatedAt
    }

    private static func sameCreator(_ a: User?, _ b: User?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): UserJSONCache.sameBytes(a, b)
        case (nil, _?), (_?, nil): false
        }
    }
}
