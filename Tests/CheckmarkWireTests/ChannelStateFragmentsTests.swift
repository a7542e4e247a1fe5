import CheckmarkCore
import CheckmarkTestSupport
import CheckmarkWire
import Testing

/// Channel states written with their member and read-state lists kept encoded between watches
/// (``ChannelStateFragments``): the same bytes as encoding afresh, whatever changed in between, and
/// never more kept than the budget.
@Suite("Channel state lists kept encoded")
struct ChannelStateFragmentsTests {
    static let general = Scenario.general
    /// More members than a channel state lists (100), so that some are listed too far back.
    static let memberCount = 130

    /// A channel of ``memberCount`` members, every third with read receipts off and every fifth with
    /// delivery receipts off (every fifteenth shows nothing), some connected, a few messages, some
    /// read and delivered.
    static func crowdedChannel() throws -> Scenario {
        var s = Scenario()
        for index in 0..<memberCount {
            let privacy = PrivacySettings(readReceipts: index % 3 != 1, deliveryReceipts: index % 5 != 1)
            try s.users("u\(index)", privacy: privacy)
        }
        try s.users("outsider")
        try s.channel(members: (0..<memberCount).map { "u\($0)" })
        for index in stride(from: 0, to: memberCount, by: 7) { try s.connect("c\(index)", as: "u\(index)") }
        try s.send("u0", "m1")
        try s.send("u1", "m2")
        for index in stride(from: 0, to: memberCount, by: 4) {
            try s.run(.markRead(cid: general, userID: "u\(index)", messageID: "m1"))
        }
        try s.run(.markDelivered(userID: "u129", latest: [DeliveredTarget(cid: general, messageID: "m2")]))
        return s
    }

    /// Viewers of every kind: listed first and last, listed too far back, the author, a non-member,
    /// and a third party (no user).
    static let viewers = ["u129", "u30", "u5", "u0", "outsider", ""]

    static func fresh(_ engine: ReceiptsEngine, viewer: String) throws -> [UInt8] {
        try ResultJSON.channelState(engine: engine, cid: general, viewer: viewer)
    }

    static func kept(_ engine: ReceiptsEngine, viewer: String, _ fragments: inout ChannelStateFragments) throws -> [UInt8] {
        try ResultJSON.channelState(engine: engine, cid: general, viewer: viewer, fragments: &fragments)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Where two encodings first differ, with some text of each from there; nil when they are equal.
    static func difference(_ a: [UInt8], _ b: [UInt8]) -> String? {
        guard a != b else { return nil }
        let at = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        let from = max(0, at - 40)
        return "at byte \(at): \(text(Array(a[from..<min(a.count, at + 80)]))) | \(text(Array(b[from..<min(b.count, at + 80)])))"
    }

    @Test func keptListsWriteWhatFreshEncodingWritesAfterEveryKindOfChange() throws {
        var s = try Self.crowdedChannel()
        var fragments = ChannelStateFragments()
        let changes: [(String, (inout Scenario) throws -> Void)] = [
            ("nothing", { _ in }),
            ("a new message", { try $0.send("u3", "m3") }),
            ("a listed member reads", { try $0.run(.markRead(cid: Self.general, userID: "u100", messageID: "m3")) }),
            ("a member listed too far back reads", { try $0.run(.markRead(cid: Self.general, userID: "u5", messageID: "m3")) }),
            ("a delivery", { try $0.run(.markDelivered(userID: "u128", latest: [DeliveredTarget(cid: Self.general, messageID: "m3")])) }),
            ("a listed member connects", { try $0.connect("c-u101", as: "u101") }),
            ("a listed member's last connection closes", { try $0.run(.disconnect(connectionID: "c126")) }),
            ("a listed member is renamed", { try $0.run(.upsertUser(User(id: "u120", name: "Someone Else \"quoted\""))) }),
            ("a listed member turns read receipts off", {
                try $0.run(.upsertUser(User(id: "u127", name: "U127", privacy: PrivacySettings(readReceipts: false, deliveryReceipts: true))))
            }),
            ("a member joins and shifts the list", { try $0.users("late"); try $0.run(.addMembers(cid: Self.general, userIDs: ["late"])) }),
            ("a listed member leaves", { try $0.run(.removeMembers(cid: Self.general, userIDs: ["u128"])) }),
            ("read events turned off for the channel type", {
                try $0.run(.updateChannelType(name: "messaging", readEvents: false, deliveryEvents: nil))
            }),
            ("a listed message's author is renamed", { try $0.run(.upsertUser(User(id: "u3", name: "Three"))) }),
            ("a thread reply to a listed message", { try $0.send("u2", "r1", parent: "m1") }),
            ("a member marks unread", { try $0.run(.markUnread(cid: Self.general, userID: "u129", from: .message("m2"))) }),
            // Regression: a soft delete and an edit keeping the text change no text, only the revision.
            ("a listed message is edited", { try $0.run(.updateMessage(cid: Self.general, messageID: "m2", text: "edited", by: nil)) }),
            ("a listed message is edited to the same text", {
                try $0.run(.updateMessage(cid: Self.general, messageID: "m2", text: "edited", by: nil))
            }),
            ("a listed message is deleted", { try $0.run(.deleteMessage(cid: Self.general, messageID: "m2", hard: false, by: nil)) }),
        ]
        for (change, apply) in changes {
            try apply(&s)
            for viewer in Self.viewers {
                let kept = try Self.kept(s.engine, viewer: viewer, &fragments)
                let fresh = try Self.fresh(s.engine, viewer: viewer)
                #expect(Self.difference(kept, fresh) == nil, "after \(change), as \(viewer.isEmpty ? "a third party" : viewer)")
            }
        }
        #expect(fragments.channelCount == 1)
    }

    /// Regression: Swift's `String ==` calls "é" and "e" with a combining accent equal, and a kept
    /// entry was reused for a profile rewritten in the other form at the same instant.
    @Test func aNameRewrittenInAnotherUnicodeFormIsEncodedAgain() throws {
        var s = try Self.crowdedChannel()
        var fragments = ChannelStateFragments()
        let at = Timestamp(rawValue: s.now + 1_000_000)
        let composed = "Jos\u{E9}", decomposed = "Jose\u{301}"
        #expect(composed == decomposed && Array(composed.utf8) != Array(decomposed.utf8))
        for name in [composed, decomposed, composed] {
            // The same instant for every rewrite: nothing but the name's bytes differs.
            _ = try s.engine.apply(.upsertUser(User(id: "u3", name: name)), at: at).get()
            _ = try s.engine.apply(.upsertUser(User(id: "u129", name: name)), at: at).get()
            for viewer in ["u9", ""] {
                let kept = try Self.kept(s.engine, viewer: viewer, &fragments)
                #expect(Self.difference(kept, try Self.fresh(s.engine, viewer: viewer)) == nil, "\(Array(name.utf8)) as \(viewer)")
            }
        }
    }

    @Test func pagesOfMessagesOfTheSameChannelEachWriteWhatFreshEncodingWrites() throws {
        var s = try Self.crowdedChannel()
        for index in 3...40 { try s.send("u\(index % 7)", "m\(index)") }
        var fragments = ChannelStateFragments()
        let pages = [MessagePagination(limit: 25), MessagePagination(limit: 5), MessagePagination(limit: 25),
                     MessagePagination(limit: 10, cursor: .idLT("m30")), MessagePagination(limit: 300)]
        for page in pages {
            let kept = try ResultJSON.channelState(engine: s.engine, cid: Self.general, viewer: "u9", messages: page, fragments: &fragments)
            let fresh = try ResultJSON.channelState(engine: s.engine, cid: Self.general, viewer: "u9", messages: page)
            #expect(Self.difference(kept, fresh) == nil, "\(page)")
        }
    }

    /// The `read` list is rule 10's (``ReceiptsEngine/readStates(of:viewer:)``), with the viewer's own
    /// state in its place or in the last place.
    @Test(arguments: viewers)
    func readListIsRuleTensListForTheViewer(viewer: String) throws {
        let s = try Self.crowdedChannel()
        var fragments = ChannelStateFragments()
        for _ in 0..<2 {
            var expected = JSONWriter()
            expected.beginArray()
            for view in try s.engine.readStates(of: Self.general, viewer: viewer) { StreamJSON.write(readState: view, into: &expected) }
            expected.endArray()
            let state = Self.text(try Self.kept(s.engine, viewer: viewer, &fragments))
            #expect(state.contains(#""read":"# + Self.text(expected.bytes) + #","messages":"#))
        }
    }

    @Test func membershipIsTheViewersOwnMemberEntryWhetherListedOrNot() throws {
        let s = try Self.crowdedChannel()
        var fragments = ChannelStateFragments()
        for viewer in ["u129", "u5"] {
            var expected = JSONWriter()
            let member = try #require(s.engine.channels[Self.general]?.members[viewer])
            let user = try #require(s.engine.users[viewer])
            ResultJSON.writeMember(user: user, memberSince: member.createdAt, online: s.engine.isOnline(viewer), into: &expected)
            let state = Self.text(try Self.kept(s.engine, viewer: viewer, &fragments))
            #expect(state.contains(#""membership":"# + Self.text(expected.bytes) + #","watcher_count""#))
        }
        #expect(!Self.text(try Self.kept(s.engine, viewer: "outsider", &fragments)).contains("membership"))
    }

    @Test func anUnknownChannelIsRefusedAndKeepsNothing() throws {
        let s = try Self.crowdedChannel()
        var fragments = ChannelStateFragments()
        #expect(throws: ReceiptsError.unknownChannel(ChannelCID(type: "messaging", id: "nowhere"))) {
            try ResultJSON.channelState(engine: s.engine, cid: ChannelCID(type: "messaging", id: "nowhere"), viewer: "u1", fragments: &fragments)
        }
        #expect(fragments.channelCount == 0)
    }
}

/// What ``ChannelStateFragments`` and ``EncodedList`` keep, and what they encode again.
@Suite("Channel state lists: budget and reuse")
struct ChannelStateFragmentsBudgetTests {
    @Test func aBudgetOfZeroKeepsNothing() throws {
        let s = try ChannelStateFragmentsTests.crowdedChannel()
        var fragments = ChannelStateFragments(budgetBytes: 0)
        _ = try ChannelStateFragmentsTests.kept(s.engine, viewer: "u1", &fragments)
        #expect(fragments.channelCount == 0 && fragments.footprint == 0)
    }

    @Test func manyChannelsStayWithinTheBudgetAndTheLatestAreKept() throws {
        var s = Scenario()
        try s.users("a", "b", "c")
        let cids = (0..<200).map { ChannelCID(type: "messaging", id: "room\($0)") }
        for cid in cids { try s.channel(cid, members: ["a", "b", "c"]) }
        let budget = 64 << 10
        var fragments = ChannelStateFragments(budgetBytes: budget)
        for cid in cids {
            _ = try ResultJSON.channelState(engine: s.engine, cid: cid, viewer: "a", fragments: &fragments)
            #expect(fragments.footprint <= budget)
        }
        #expect(fragments.channelCount > 0 && fragments.channelCount < cids.count, "\(fragments.channelCount) kept")
    }

    @Test func aChannelOverHalfTheBudgetIsNotKept() throws {
        let s = try ChannelStateFragmentsTests.crowdedChannel()
        var fragments = ChannelStateFragments(budgetBytes: 16 << 10)
        _ = try ChannelStateFragmentsTests.kept(s.engine, viewer: "u1", &fragments)
        #expect(fragments.channelCount == 0 && fragments.footprint == 0)
    }

    /// An entry that counts its encodings.
    struct CountedEntry: EncodedListEntry {
        final class Counter: @unchecked Sendable { var encodings = 0 }
        var key: String
        var value: Int
        var counter: Counter

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key && lhs.value == rhs.value }

        func encode(into writer: inout JSONWriter) {
            counter.encodings += 1
            guard value >= 0 else { return }
            writer.beginObject()
            writer.field(key, value)
            writer.endObject()
        }
    }

    @Test func onlyChangedEntriesAreEncodedAgainWhereverTheOthersMoved() {
        let counter = CountedEntry.Counter()
        func entries(_ pairs: [(String, Int)]) -> [CountedEntry] { pairs.map { CountedEntry(key: $0.0, value: $0.1, counter: counter) } }
        var list = EncodedList<CountedEntry>()
        list.update(to: entries([("a", 1), ("b", -1), ("c", 3)]))
        #expect(counter.encodings == 3)
        #expect(String(decoding: list.bytes, as: UTF8.self) == #"[{"a":1},{"c":3}]"#)
        list.update(to: entries([("a", 1), ("b", -1), ("c", 3)]))
        #expect(counter.encodings == 3, "nothing changed: nothing encoded")
        list.update(to: entries([("new", 0), ("a", 1), ("b", 2), ("c", 3)]))
        #expect(counter.encodings == 5, "the new entry and the changed one only")
        #expect(String(decoding: list.bytes, as: UTF8.self) == #"[{"new":0},{"a":1},{"b":2},{"c":3}]"#)
        var writer = JSONWriter()
        writer.beginArray()
        list.writeElements(1..<3, into: &writer)
        writer.string("x")
        list.writeElements(3..<4, into: &writer)
        writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[{"a":1},{"b":2},"x",{"c":3}]"#)
    }
}
