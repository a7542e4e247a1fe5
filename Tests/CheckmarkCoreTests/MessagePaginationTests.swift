import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Stream's message paging (`MessagePaginationParams`): one cursor, pages oldest first, thread-only
/// replies never among a channel's messages.
@Suite("Message paging")
struct MessagePaginationTests {
    /// Ten channel messages m0...m9 with a thread-only reply after m4.
    static func channel() throws -> Channel {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        for i in 0..<10 {
            try s.send("a", "m\(i)")
            if i == 4 { try s.send("b", "r4", parent: "m4") }
        }
        return s.engine.channels[Scenario.general]!
    }

    func ids(_ pagination: MessagePagination, _ channel: Channel) throws -> [String] {
        try pagination.page(of: channel.channelMessagePositions, in: channel.messages)
            .map { channel.messages[$0].id }
    }

    func time(_ id: String, _ channel: Channel) -> Timestamp { channel.messages.createdAt(at: channel.messages.position(of: id)!) }

    @Test func withoutCursorTheNewestPageOldestFirstWithoutThreadReplies() throws {
        let channel = try Self.channel()
        #expect(try ids(MessagePagination(limit: 3), channel) == ["m7", "m8", "m9"])
        #expect(try ids(MessagePagination(limit: 20), channel) == (0..<10).map { "m\($0)" })
    }

    @Test(arguments: [
        (MessagePagination.Cursor.idLT("m6"), ["m3", "m4", "m5"]),
        (.idLTE("m6"), ["m4", "m5", "m6"]),
        (.idGT("m2"), ["m3", "m4", "m5"]),
        (.idGTE("m2"), ["m2", "m3", "m4"]),
        (.idAround("m5"), ["m4", "m5", "m6"]),
        (.idAround("m0"), ["m0", "m1", "m2"]),
        (.idAround("m9"), ["m7", "m8", "m9"]),
        (.idLT("m1"), ["m0"]),
        (.idGT("m9"), []),
    ])
    func idCursorsSelectTheirPage(cursor: MessagePagination.Cursor, expected: [String]) throws {
        #expect(try ids(MessagePagination(limit: 3, cursor: cursor), try Self.channel()) == expected)
    }

    @Test func timeCursorsSelectTheirPage() throws {
        let channel = try Self.channel()
        let t6 = time("m6", channel)
        #expect(try ids(MessagePagination(limit: 3, cursor: .createdAtBefore(t6)), channel) == ["m3", "m4", "m5"])
        #expect(try ids(MessagePagination(limit: 3, cursor: .createdAtBeforeOrEqual(t6)), channel) == ["m4", "m5", "m6"])
        #expect(try ids(MessagePagination(limit: 3, cursor: .createdAtAfter(t6)), channel) == ["m7", "m8", "m9"])
        #expect(try ids(MessagePagination(limit: 3, cursor: .createdAtAfterOrEqual(t6)), channel) == ["m6", "m7", "m8"])
        #expect(try ids(MessagePagination(limit: 3, cursor: .createdAtAround(t6)), channel) == ["m5", "m6", "m7"])
        // Between two messages: before and after split there.
        let between = Timestamp(rawValue: t6.rawValue - 1)
        #expect(try ids(MessagePagination(limit: 2, cursor: .createdAtAfter(between)), channel) == ["m6", "m7"])
    }

    @Test func walkingBackwardsAndForwardsSeesEveryMessageOnce() throws {
        let channel = try Self.channel()
        var seen: [String] = []
        var page = try ids(MessagePagination(limit: 4), channel)
        while !page.isEmpty {
            seen = page + seen
            page = try ids(MessagePagination(limit: 4, cursor: .idLT(page[0])), channel)
        }
        #expect(seen == (0..<10).map { "m\($0)" })
        var forward = try ids(MessagePagination(limit: 4, cursor: .idGTE("m0")), channel)
        var all = forward
        while let last = forward.last {
            forward = try ids(MessagePagination(limit: 4, cursor: .idGT(last)), channel)
            all += forward
        }
        #expect(all == seen)
    }

    @Test func cursorNotInTheListIsRefusedNamingTheField() throws {
        let channel = try Self.channel()
        for (cursor, field) in [(MessagePagination.Cursor.idLT("nope"), "messages.id_lt"), (.idGT("r4"), "messages.id_gt")] {
            #expect {
                try MessagePagination(limit: 3, cursor: cursor)
                    .page(of: channel.channelMessagePositions, in: channel.messages, prefix: "messages.")
            } throws: { error in
                guard case ReceiptsError.invalidArgument(let text) = error else { return false }
                return text.hasPrefix(field)
            }
        }
    }

    @Test func repliesPageThroughTheirThread() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.send("a", "p")
        for i in 0..<5 {
            try s.send("b", "r\(i)", parent: "p")
            try s.send("a", "c\(i)")
        }
        let channel = s.engine.channels[Scenario.general]!
        let replies = channel.threads["p"]!.replyPositions
        let page = try MessagePagination(limit: 2, cursor: .idLT("r3")).page(of: replies, in: channel.messages)
        #expect(page.map { channel.messages[$0].id } == ["r1", "r2"])
        #expect(channel.channelMessagePositions.map { channel.messages[$0].id } == ["p", "c0", "c1", "c2", "c3", "c4"])
    }
}
