import CheckmarkCore
import CheckmarkWire
import Testing

/// Users in events written from the cache: byte for byte what writing them afresh gives, whatever
/// changed about the user and whichever users share a slot.
@Suite("User JSON cache")
struct UserJSONCacheTests {
    static func fresh(_ user: User) -> String {
        var writer = JSONWriter()
        StreamJSON.write(user: user, into: &writer)
        return text(writer.bytes)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    static func event(_ user: User) -> ReceiptsEvent {
        ReceiptsEvent(payload: .notificationMarkRead(user: user, lastReadMessageID: "m1", channel: nil), cid: ChannelCID(type: "messaging", id: "general"),
                      createdAt: Timestamp(rawValue: 1_763_000_000_000_000), recipients: [])
    }

    @Test func anEventEncodedWithTheCacheIsTheEventEncodedWithout() {
        var cache = UserJSONCache()
        var channels = ChannelJSONCache()
        let user = User(id: "b", name: "B", custom: [("team", .string("blue"))], createdAt: Timestamp(rawValue: 5))
        for _ in 0..<2 {
            #expect(StreamJSON.encode(Self.event(user), channelSeq: 3, users: &cache, channels: &channels) == StreamJSON.encode(Self.event(user), channelSeq: 3))
        }
    }

    @Test func aUserChangedInAnyFieldIsWrittenAfresh() {
        var cache = UserJSONCache()
        let user = User(id: "b", name: "B", createdAt: Timestamp(rawValue: 5))
        _ = cache.json(for: user)
        var renamed = user
        renamed.name = "Bea"
        var customized = user
        customized.custom = [("team", .string("blue"))]
        var private_ = user
        private_.privacy.readReceipts = false
        var updated = user
        updated.updatedAt = Timestamp(rawValue: 9)
        for changed in [renamed, customized, private_, updated] {
            #expect(Self.text(cache.json(for: changed)) == Self.fresh(changed))
            #expect(Self.text(cache.json(for: user)) == Self.fresh(user))
        }
    }

    @Test func aUserRespelledInAnEquivalentUnicodeFormIsWrittenAfresh() {
        // Equal as Swift strings, different bytes on the wire.
        var cache = UserJSONCache()
        let composed = User(id: "b", name: "Ren\u{E9}", createdAt: Timestamp(rawValue: 5))
        var decomposed = composed
        decomposed.name = "Rene\u{301}"
        #expect(composed == decomposed)
        _ = cache.json(for: composed)
        // Bytes, not strings: String's == would call the two spellings equal too.
        #expect(cache.json(for: decomposed) == Array(Self.fresh(decomposed).utf8))
        #expect(cache.json(for: decomposed) != Array(Self.fresh(composed).utf8))
    }

    @Test func aUserLargerThanTheLimitIsWrittenButNotKept() {
        var cache = UserJSONCache()
        let large = User(id: "big", name: String(repeating: "n", count: UserJSONCache.maxUserBytes), createdAt: Timestamp(rawValue: 5))
        #expect(Self.text(cache.json(for: large)) == Self.fresh(large))
        #expect(cache.keptUsers == 0)
        _ = cache.json(for: User(id: "small", createdAt: Timestamp(rawValue: 5)))
        #expect(cache.keptUsers == 1)
    }

    @Test func moreUsersThanItHoldsEachGetTheirOwnJSON() {
        // More users than it holds: it empties itself when full and keeps at most its capacity.
        var cache = UserJSONCache()
        let users = (0..<(UserJSONCache.capacity + 1000)).map { User(id: "u\($0)", createdAt: Timestamp(rawValue: Int64($0))) }
        for user in users { _ = cache.json(for: user) }
        // Full at the capacity-th user, emptied by the next: it holds only the last 1,000.
        #expect(cache.keptUsers == 1000)
        for user in users.reversed() {
            #expect(Self.text(cache.json(for: user)) == Self.fresh(user))
        }
    }

    @Test func usersUpToTheCapacityAreAllKept() {
        // Every user has a place of their own: none replaces another while there is room.
        var cache = UserJSONCache()
        let users = (0..<UserJSONCache.capacity).map { User(id: "u\($0)", createdAt: Timestamp(rawValue: Int64($0))) }
        for user in users { _ = cache.json(for: user) }
        #expect(cache.keptUsers == UserJSONCache.capacity)
        _ = cache.json(for: users[0])
        #expect(cache.keptUsers == UserJSONCache.capacity)
    }
}
