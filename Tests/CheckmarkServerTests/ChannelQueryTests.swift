@testable import CheckmarkServer
import CheckmarkCore
import CheckmarkWire
import Testing

/// Query channels' `filter_conditions` and `sort` (the supported subset of Stream's language).
@Suite("Query channels: filter and sort")
struct ChannelQueryTests {
    static func channel(_ id: String, members: [String], createdAt: Int64, lastMessageAt: Int64? = nil) -> Channel {
        var channel = Channel(cid: ChannelCID(type: "messaging", id: id), createdBy: nil, createdAt: Timestamp(rawValue: createdAt))
        for member in members {
            channel.members[member] = Member(userID: member, createdAt: Timestamp(rawValue: createdAt), read: ReadState(joinedAt: Timestamp(rawValue: createdAt), messageCount: 0))
            channel.memberOrder.append(member)
        }
        if let lastMessageAt {
            channel.messages.append(Message(id: "\(id)-m", cid: channel.cid, userID: members[0], text: "x", kind: .regular,
                                            createdAt: Timestamp(rawValue: lastMessageAt)))
        }
        return channel
    }

    static let a = ChannelListing.resident(channel("a", members: ["ann", "ben"], createdAt: 1, lastMessageAt: 50))
    /// Dormant channels are filtered and sorted alike (issue 44).
    static let b = ChannelListing.dormant(DormantChannel(of: channel("b", members: ["ben", "cat"], createdAt: 2)))
    static let c = ChannelListing.dormant(DormantChannel(of: channel("c", members: ["ann", "ben", "cat"], createdAt: 3, lastMessageAt: 10)))

    static func parse(_ json: String) throws -> JSONValue { try JSONParser.parse(Array(json.utf8)) }

    @Test(arguments: [
        (#"{"members":{"$in":["ann"]}}"#, ["a", "c"]),
        (#"{"members":"cat"}"#, ["b", "c"]),
        (#"{"members":{"$eq":["ben","ann"]}}"#, ["a"]),
        (#"{"cid":{"$in":["messaging:a","messaging:b"]}}"#, ["a", "b"]),
        (#"{"id":"c","type":"messaging"}"#, ["c"]),
        (#"{"$and":[{"members":{"$in":["cat"]}},{"id":{"$in":["c","a"]}}]}"#, ["c"]),
        (#"{"type":{"$eq":"livestream"}}"#, []),
        (#"{}"#, ["a", "b", "c"]),
    ])
    func filterSelectsTheChannelsItDescribes(json: String, expected: [String]) throws {
        let filter = try ChannelFilter(parsing: try Self.parse(json))
        #expect([Self.a, Self.b, Self.c].filter(filter.matches).map(\.cid.id) == expected)
    }

    @Test(arguments: [
        #"{"name":"x"}"#, #"{"members":{"$nin":["ann"]}}"#, #"{"cid":{"$in":"messaging:a"}}"#, #"{"$and":{}}"#, #"[]"#,
        #"{"id":{"$gt":"a"}}"#,
    ])
    func unsupportedFiltersAreRefusedWithAMessage(json: String) throws {
        #expect(throws: WireError.self) { try ChannelFilter(parsing: try Self.parse(json)) }
    }

    @Test(arguments: [
        ("null", ["a", "c", "b"]),  // last_updated, newest first: a (50), c (10), b (2)
        (#"[{"field":"last_message_at","direction":1}]"#, ["b", "c", "a"]),
        (#"[{"field":"created_at","direction":-1}]"#, ["c", "b", "a"]),
        (#"[{"field":"member_count","direction":-1},{"field":"cid","direction":1}]"#, ["c", "a", "b"]),
    ])
    func sortOrdersByItsKeysThenByCid(json: String, expected: [String]) throws {
        let order = try ChannelOrder(parsing: try Self.parse(json))
        #expect([Self.a, Self.b, Self.c].sorted(by: order.precedes).map(\.cid.id) == expected)
    }

    @Test(arguments: [#"[{"field":"name","direction":1}]"#, #"[{"field":"cid","direction":2}]"#, #"{"cid":1}"#])
    func unsupportedSortsAreRefused(json: String) throws {
        #expect(throws: WireError.self) { try ChannelOrder(parsing: try Self.parse(json)) }
    }

    @Test func distinctChannelIDIgnoresMemberOrderAndDuplicates() {
        let id = RESTAPI.distinctID(members: ["ben", "ann"])
        #expect(id == RESTAPI.distinctID(members: ["ann", "ben", "ann"]))
        #expect(id != RESTAPI.distinctID(members: ["ann", "cat"]))
        #expect(id.hasPrefix("!members-") && ChannelCID.isValidName(id))
    }
}
