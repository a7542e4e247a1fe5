import CheckmarkCore
import CheckmarkWire
import Testing

/// Channel objects in events written from the cache: byte for byte what writing them afresh gives,
/// whatever changed about the channel, its creator or its type.
@Suite("Channel JSON cache")
struct ChannelJSONCacheTests {
    static func fresh(_ channel: ChannelSummary) -> String {
        var writer = JSONWriter()
        StreamJSON.write(channel: channel, into: &writer)
        return text(writer.bytes)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static let general = ChannelSummary(
        cid: ChannelCID(type: "messaging", id: "general"), createdBy: "ann", creator: User(id: "ann", name: "Ann", createdAt: Timestamp(rawValue: 3)),
        createdAt: Timestamp(rawValue: 10), lastMessageAt: Timestamp(rawValue: 20), memberCount: 3, type: .messaging)

    static func markRead(_ channel: ChannelSummary) -> ReceiptsEvent {
        ReceiptsEvent(payload: .notificationMarkRead(user: User(id: "b", createdAt: Timestamp(rawValue: 5)), lastReadMessageID: "m1", channel: channel),
                      cid: channel.cid, createdAt: Timestamp(rawValue: 1_763_000_000_000_000), recipients: [])
    }

    @Test func anEventEncodedWithTheCacheIsTheEventEncodedWithout() {
        var users = UserJSONCache()
        var channels = ChannelJSONCache()
        for _ in 0..<2 {
            #expect(StreamJSON.encode(Self.markRead(Self.general), channelSeq: 4, users: &users, channels: &channels)
                == StreamJSON.encode(Self.markRead(Self.general), channelSeq: 4))
        }
        #expect(channels.keptChannels == 1)
    }

    @Test func aChannelChangedInAnyFieldIsWrittenAfresh() {
        var cache = ChannelJSONCache()
        _ = cache.json(for: Self.general)
        var changes: [ChannelSummary] = []
        var summary = Self.general
        summary.memberCount = 4
        changes.append(summary)
        summary = Self.general
        summary.lastMessageAt = Timestamp(rawValue: 21)
        changes.append(summary)
        summary = Self.general
        summary.lastMessageAt = nil
        changes.append(summary)
        summary = Self.general
        summary.creator?.name = "Anne"
        changes.append(summary)
        summary = Self.general
        summary.creator = nil
        changes.append(summary)
        summary = Self.general
        summary.createdBy = nil
        changes.append(summary)
        summary = Self.general
        summary.createdAt = Timestamp(rawValue: 11)
        changes.append(summary)
        summary = Self.general
        summary.type.readEvents = false
        changes.append(summary)
        summary = Self.general
        summary.type.deliveryEvents = true
        changes.append(summary)
        summary = Self.general
        summary.type.typingEvents = false
        changes.append(summary)
        summary = Self.general
        summary.type.customEvents = false
        changes.append(summary)
        summary = Self.general
        summary.type.updatedAt = Timestamp(rawValue: 99)
        changes.append(summary)
        summary = Self.general
        summary.type.createdAt = Timestamp(rawValue: 98)
        changes.append(summary)
        for changed in changes {
            #expect(Self.text(cache.json(for: changed)) == Self.fresh(changed))
            #expect(Self.text(cache.json(for: Self.general)) == Self.fresh(Self.general))
        }
    }

    @Test func everyFieldOfTheSummaryAndItsTypeIsCompared() {
        // A field added to either type must join the cache's comparison (and the test above).
        #expect(Mirror(reflecting: Self.general).children.count == 7)
        #expect(Mirror(reflecting: Self.general.type).children.count == 7)
    }

    @Test func aChannelRespelledInAnEquivalentUnicodeFormIsWrittenAfresh() {
        var cache = ChannelJSONCache()
        var composed = Self.general
        composed.type.name = "caf\u{E9}"
        var decomposed = composed
        decomposed.type.name = "cafe\u{301}"
        #expect(composed == decomposed)
        _ = cache.json(for: composed)
        #expect(cache.json(for: decomposed) == Array(Self.fresh(decomposed).utf8))
        #expect(cache.json(for: decomposed) != Array(Self.fresh(composed).utf8))
    }

    @Test func aChannelLargerThanTheLimitIsWrittenButNotKept() {
        var cache = ChannelJSONCache()
        var large = Self.general
        large.creator?.name = String(repeating: "n", count: ChannelJSONCache.maxChannelBytes)
        #expect(Self.text(cache.json(for: large)) == Self.fresh(large))
        #expect(cache.keptChannels == 0)
    }

    @Test func moreChannelsThanItHoldsEachGetTheirOwnJSON() {
        var cache = ChannelJSONCache()
        let channels = (0..<(ChannelJSONCache.capacity + 100)).map { index in
            var channel = Self.general
            channel.cid = ChannelCID(type: "messaging", id: "c\(index)")
            return channel
        }
        for channel in channels { _ = cache.json(for: channel) }
        // Full at the capacity-th channel, emptied by the next: it holds only the last 100.
        #expect(cache.keptChannels == 100)
        for channel in channels.suffix(200) {
            #expect(Self.text(cache.json(for: channel)) == Self.fresh(channel))
        }
    }
}
