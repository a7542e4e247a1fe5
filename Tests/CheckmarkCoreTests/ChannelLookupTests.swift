@testable import CheckmarkCore
import CheckmarkTestSupport
import PropertyBased
import Testing

/// Issue 44: the channel's look-ups by position and time answer from its list of channel messages in
/// O(log n) exactly what a walk over its history answers, so that a member far behind, or a mark
/// unread by time, does not pay for the whole history on the engine loop.
@Suite("Channel look-ups over the history")
struct ChannelLookupTests {
    /// The walk ``Channel/channelMessage(before:)`` replaced.
    static func walkedChannelMessage(_ channel: Channel, before index: Int) -> Int? {
        (0..<index).last { channel.messages.isChannelMessage(at: $0) }
    }

    /// The walk ``Channel/isAmongLast(_:index:)`` replaced.
    static func walkedIsAmongLast(_ channel: Channel, _ limit: Int, index: Int) -> Bool {
        (index..<channel.messages.count).filter { channel.messages.isChannelMessage(at: $0) }.count <= limit
    }

    /// The scan mark unread by time made.
    static func scannedFirst(_ channel: Channel, atOrAfter time: Timestamp) -> Int? {
        channel.messages.indices.first { channel.messages.isChannelMessage(at: $0) && channel.messages.createdAt(at: $0) >= time }
    }

    @Test func lookUpsAnswerAsTheWalksDidOverRandomHistories() async {
        await propertyCheck(count: 80, input: Gen.int(in: 0...100_000).array(of: 20...160)) { numbers in
            var s = ReceiptsPropertyTests.world()
            for n in numbers {
                let command = ReceiptsPropertyTests.command(n, in: s)
                if case .success = s.engine.apply(command, at: Timestamp(rawValue: s.now + 1_000_000)) { s.now += 1_000_000 }
            }
            for channel in s.engine.channels.values {
                for index in 0...channel.messages.count {
                    #expect(channel.channelMessage(before: index) == Self.walkedChannelMessage(channel, before: index))
                    for limit in [0, 1, 3, 100] {
                        #expect(channel.isAmongLast(limit, index: index) == Self.walkedIsAmongLast(channel, limit, index: index))
                    }
                }
                var times = channel.messages.indices.map { channel.messages.createdAt(at: $0) }
                times += times.map(\.successor) + times.map(\.predecessor) + [Timestamp(rawValue: 0), Timestamp(rawValue: .max)]
                for time in times {
                    #expect(channel.firstChannelMessage(createdAtOrAfter: time) == Self.scannedFirst(channel, atOrAfter: time))
                }
            }
        }
    }

    /// A member who never read a long history reads it all at once; another marks unread from a time:
    /// the counts are the recounted ones.
    @Test func aMemberFarBehindReadsEverythingAndAnotherMarksUnreadByTime() throws {
        var s = Scenario()
        try s.users("a", "b", "c", "d")
        try s.channel(members: ["a", "b", "c", "d"])
        for i in 0..<300 {
            try s.run(.sendMessage(cid: Scenario.general, userID: i % 7 == 0 ? "b" : "a",
                                   draft: MessageDraft(id: "m\(i)", text: "t", parentID: i % 5 == 4 ? "m0" : nil, silent: i % 11 == 0)))
        }
        let channel = { s.engine.channels[Scenario.general]! }
        #expect(channel().members["d"]?.read.unreadMessages == channel().countUnread(for: "d", from: 0))
        try s.run(.markRead(cid: Scenario.general, userID: "d", messageID: nil))
        #expect(channel().members["d"]?.read.unreadMessages == 0)
        // Near the start: what was passed is counted and taken off.
        try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: "m100"))
        #expect(channel().members["c"]?.read.unreadMessages == channel().countUnread(for: "c", from: channel().messages.position(of: "m100")! + 1))
        // Near the end: what stays unread is counted, not the history passed.
        try s.run(.markRead(cid: Scenario.general, userID: "c", messageID: "m260"))
        #expect(channel().members["c"]?.read.unreadMessages == channel().countUnread(for: "c", from: channel().messages.position(of: "m260")! + 1))
        let since = channel().messages.createdAt(at: channel().messages.position(of: "m250")!)
        try s.run(.markUnread(cid: Scenario.general, userID: "c", from: .timestamp(since.predecessor)))
        #expect(channel().members["c"]?.read.markedUnreadMessageID == "m250")
        #expect(channel().members["c"]?.read.unreadMessages == channel().countUnread(for: "c", from: channel().messages.position(of: "m250")!))
    }
}
