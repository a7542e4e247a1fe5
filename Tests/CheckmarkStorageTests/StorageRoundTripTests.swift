import CheckmarkCore
import CheckmarkStorage
import CheckmarkTestSupport
import Testing

/// Issue: restart with exactly the state it had. Commands go through the engine and are committed
/// the way the service commits them (journal entry plus the rows of the command's footprint); a
/// reopened store must load an engine whose fingerprint is identical.
@Suite("Storage round trip")
struct StorageRoundTripTests {
    static let general = ChannelCID(type: "messaging", id: "general")
    static let team = ChannelCID(type: "team", id: "core")

    /// A history that exercises every durable command and every pointer rule.
    static let history: [ReceiptsCommand] = [
        .upsertUser(User(id: "alice", name: "Alice", custom: [("tier", .string("gold")), ("n", .number(3))])),
        .upsertUser(User(id: "bob", privacy: PrivacySettings(readReceipts: false))),
        .upsertUser(User(id: "carol")),
        .createChannelType(ChannelType(name: "team", readEvents: true, deliveryEvents: true)),
        .createChannel(cid: general, createdBy: "alice", members: ["alice", "bob"]),
        .createChannel(cid: team, createdBy: "bob", members: ["alice", "bob", "carol"]),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(id: "m1", text: "hello \"world\"\n✓")),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(text: "generated id")),
        .sendMessage(cid: general, userID: "bob", draft: MessageDraft(id: "t1", text: "thread", parentID: "m1")),
        .sendMessage(cid: general, userID: "bob", draft: MessageDraft(id: "s1", text: "silent", silent: true)),
        .sendMessage(cid: team, userID: "carol", draft: MessageDraft(id: "c1", text: "team", kind: .system)),
        .sendMessage(cid: team, userID: "carol", draft: MessageDraft(id: "c2", text: "team 2")),
        .markDelivered(userID: "alice", latest: [DeliveredTarget(cid: team, messageID: "c1")]),
        .markRead(cid: general, userID: "bob", messageID: "m1"),
        // Edits and deletes (rules M1-M6): a text edited, one edited to itself, a soft delete.
        .updateMessage(cid: general, messageID: "m1", text: "hello, edited ✓", by: "alice"),
        .updateMessage(cid: team, messageID: "c2", text: "team 2", by: nil),
        .deleteMessage(cid: general, messageID: "s1", hard: false, by: "bob"),
        // Reactions (rules R1-R5): two users, a score sent again, one replaced, one taken back.
        .sendReaction(cid: general, messageID: "m1", userID: "bob", type: "like", score: 1, enforceUnique: false),
        .sendReaction(cid: general, messageID: "m1", userID: "alice", type: "clap", score: 3, enforceUnique: false),
        .sendReaction(cid: general, messageID: "m1", userID: "alice", type: "clap", score: 9, enforceUnique: false),
        .sendReaction(cid: team, messageID: "c2", userID: "carol", type: "love", score: 1, enforceUnique: false),
        .sendReaction(cid: team, messageID: "c2", userID: "carol", type: "wow ✓", score: 1, enforceUnique: true),
        .sendReaction(cid: team, messageID: "c1", userID: "bob", type: "like", score: 1, enforceUnique: false),
        .deleteReaction(cid: team, messageID: "c1", userID: "bob", type: "like"),
        .addMembers(cid: general, userIDs: ["carol"]),
        .sendMessage(cid: general, userID: "carol", draft: MessageDraft(id: "m3", text: "after carol")),
        .markUnread(cid: general, userID: "alice", from: .message("m3")),
        .updateUser(UserPatch(id: "carol", set: [("name", .string("Carol")), ("privacy_settings", .object([("delivery_receipts", .object([("enabled", .bool(false))]))]))])),
        .updateUser(UserPatch(id: "bob", set: [("privacy_settings", .object([("typing_indicators", .object([("enabled", .bool(false))]))]))])),
        .updateChannelType(name: "team", readEvents: false, deliveryEvents: nil),
        .updateChannelType(name: "team", readEvents: nil, deliveryEvents: nil, typingEvents: false, customEvents: false),
        .markReadMany(userID: "carol", channels: nil),
        .removeMembers(cid: team, userIDs: ["bob"]),
        .markReadMany(userID: "alice", channels: [ChannelReadTarget(cid: team, messageID: "c1")]),
        // Threads: replies by two users, a thread read, a silent reply, and a participant removed.
        .sendMessage(cid: team, userID: "alice", draft: MessageDraft(id: "c1-r1", text: "reply", parentID: "c1")),
        .sendMessage(cid: team, userID: "carol", draft: MessageDraft(id: "c1-r2", text: "reply 2", parentID: "c1", showInChannel: true)),
        .sendMessage(cid: team, userID: "alice", draft: MessageDraft(id: "c1-r3", text: "quiet", parentID: "c1", silent: true)),
        .markThreadRead(cid: general, userID: "alice", parentID: "m1"),
        .sendMessage(cid: general, userID: "carol", draft: MessageDraft(id: "t2", text: "more", parentID: "m1")),
        .sendReaction(cid: team, messageID: "c1-r1", userID: "carol", type: "like", score: 1, enforceUnique: false),
        .deleteMessage(cid: team, messageID: "c1-r1", hard: true, by: nil),
        .updateMessage(cid: general, messageID: "m1", text: "edited twice", by: nil),
        .removeMembers(cid: general, userIDs: ["bob"]),
    ]

    /// Applies `commands` and commits each that changed durable state as the service would; returns those.
    @discardableResult
    static func applyAndCommit(_ commands: [ReceiptsCommand], to store: any ReceiptsStore, engine: inout ReceiptsEngine,
                               seq: inout Int64, startingAt start: Int64 = 1_763_000_000_000_000) throws -> [ReceiptsCommand] {
        var committed: [ReceiptsCommand] = []
        var now = start
        for command in commands {
            now += 1_000_000
            let outcome = try engine.apply(command, at: Timestamp(rawValue: now)).get()
            guard outcome.changed, ReceiptsEngine.isDurable(command) else { continue }
            seq += 1
            let entry = JournalEntry(seq: seq, at: engine.clock, command: command, events: [])
            try store.commit(CommitBatch(entries: [entry], footprint: engine.takeFootprint(), engine: engine))
            committed.append(command)
        }
        return committed
    }

    @Test(arguments: StoreKind.available) func reopenedStoreLoadsIdenticalState(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        do {
            let store = try location.open()
            try Self.applyAndCommit(Self.history, to: store, engine: &engine, seq: &seq)
            store.close()
        }
        let reopened = try location.open()
        let stored = try reopened.load()
        let restored = ReceiptsEngine(restoring: stored.snapshot)
        #expect(fingerprint(restored) == fingerprint(engine))
        #expect(stored.lastSeq == seq)
        // The clock is the newest entry's time (the history ends with a command that is journaled).
        #expect(restored.clock == engine.clock)
        // Queries answer alike too.
        #expect(try restored.readStates(of: Self.general, viewer: "carol") == engine.readStates(of: Self.general, viewer: "carol"))
        #expect(try restored.unreadChannels(of: "alice") == engine.unreadChannels(of: "alice"))
    }

    /// Issue 44: a load holds the texts of each channel's newest `messageWindow` messages only, and
    /// the store gives the others back by position; the restored engine decides as the original.
    @Test(arguments: StoreKind.available) func aLoadArchivesTextsOutOfTheWindowAndGivesThemBack(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        let store = try location.open()
        defer { store.close() }
        try Self.applyAndCommit(Self.history, to: store, engine: &engine, seq: &seq)
        var restored = ReceiptsEngine(restoring: try store.load(messageWindow: 2).snapshot)
        for (cid, channel) in engine.channels {
            let log = restored.channels[cid]!.messages
            #expect(log.count == channel.messages.count && log.durableCount == log.count)
            #expect(log.indices.map { log.holdsText(at: $0) } == log.indices.map { $0 >= log.count - 2 }, "\(cid)")
            let texts = try store.archivedTexts(cid, positions: Array(log.indices) + [log.count + 5])
            #expect(texts == Dictionary(uniqueKeysWithValues: log.indices.map { ($0, channel.messages[$0].text) }), "a position with no message is absent")
        }
        #expect(try store.archivedTexts(Self.general, positions: []) == [:])
        // Every text held (the window: none archived) gives the same state as before.
        #expect(fingerprint(ReceiptsEngine(restoring: try store.load().snapshot)) == fingerprint(engine))
        for command: ReceiptsCommand in [.markRead(cid: Self.general, userID: "carol", messageID: "m1"),
                                         .markUnread(cid: Self.general, userID: "alice", from: .message("m1"))] {
            let at = Timestamp(rawValue: 1_800_000_000_000_000)
            #expect(restored.apply(command, at: at) == engine.apply(command, at: at))
        }
    }

    @Test(arguments: StoreKind.available) func restoredEngineGoesOnExactlyLikeTheOriginal(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        let store = try location.open()
        try Self.applyAndCommit(Self.history, to: store, engine: &engine, seq: &seq)
        var restored = ReceiptsEngine(restoring: try store.load().snapshot)
        let more: [ReceiptsCommand] = [
            .sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(text: "another generated id")),
            .markRead(cid: Self.general, userID: "alice", messageID: nil),
            .markUnread(cid: Self.general, userID: "carol", from: .message("m1")),
        ]
        var now: Int64 = 1_800_000_000_000_000
        for command in more {
            now += 1_000
            let a = engine.apply(command, at: Timestamp(rawValue: now))
            let b = restored.apply(command, at: Timestamp(rawValue: now))
            #expect(a == b)
        }
        #expect(fingerprint(restored) == fingerprint(engine))
    }

    @Test(arguments: StoreKind.available) func journalSequencesAreConsecutiveAndCommandsReadBack(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        let store = try location.open()
        let committed = try Self.applyAndCommit(Self.history, to: store, engine: &engine, seq: &seq)
        let entries = try store.journal(after: 0, limit: 1_000)
        #expect(entries.map(\.seq) == Array(1...seq))
        #expect(entries.map(\.command) == committed)
        let tail = try store.journal(after: 5, limit: 3)
        #expect(tail.map(\.seq) == [6, 7, 8])
    }

    /// Commits a short history, then ten journal entries of one channel, each with one event (its
    /// audience and JSON from `event`, given the channel sequence 1...10). Returns the last sequence.
    @discardableResult
    static func commitTenChannelEvents(to store: any ReceiptsStore, event: (Int) -> (EventAudience, [UInt8])) throws -> Int64 {
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try applyAndCommit(Array(history.prefix(5)), to: store, engine: &engine, seq: &seq)
        for index in 1...10 {
            seq += 1
            let (audience, json) = event(index)
            let journaled = JournalEvent(seq: Int64(index), cid: general, channelSeq: Int64(index), type: "message.read", audience: audience, json: json)
            let command = ReceiptsCommand.markRead(cid: general, userID: "bob", messageID: nil)
            try store.commit(CommitBatch(entries: [JournalEntry(seq: seq, at: Timestamp(rawValue: Int64(index)), command: command, events: [journaled])],
                                         footprint: StateFootprint(), engine: engine))
        }
        return seq
    }

    /// Issue 42: a replay reads a page at a time, bounded in rows and in bytes of JSON.
    @Test(arguments: StoreKind.available) func aPageOfChannelEventsStopsAtItsLimitAndByteBudget(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        // Ten events of one channel; the fourth is 3,000 bytes, the others 100.
        try Self.commitTenChannelEvents(to: store) { index in
            (.watchers, Array(("{\"n\":\"" + String(repeating: "x", count: (index == 4 ? 3_000 : 100) - 8) + "\"}").utf8))
        }
        func page(after: Int64, limit: Int, maxBytes: Int) throws -> [Int64?] {
            try store.channelEvents(Self.general, after: after, through: 10, limit: limit, maxBytes: maxBytes).map(\.channelSeq)
        }
        #expect(try page(after: 0, limit: 5, maxBytes: .max) == [1, 2, 3, 4, 5])
        #expect(try page(after: 0, limit: 100, maxBytes: 300) == [1, 2, 3], "the fourth would pass 300 bytes")
        #expect(try page(after: 3, limit: 100, maxBytes: 300) == [4], "the first comes whatever its size")
        #expect(try page(after: 4, limit: 100, maxBytes: 350) == [5, 6, 7])
        #expect(try page(after: 8, limit: 100, maxBytes: 10_000) == [9, 10])
    }

    @Test(arguments: StoreKind.available) func retentionKeepsTheNewestEventsPerChannel(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        // Ten journal entries of one channel, each with one event.
        let seq = try Self.commitTenChannelEvents(to: store) { index in (index == 8 ? .user("bob") : .watchers, Array("{}".utf8)) }
        // At most `limit` rows a call, the oldest first.
        let first = try store.prune(RetentionPolicy(maxEventsPerChannel: 4), now: Timestamp(rawValue: 100), limit: 4)
        #expect(first.events == 4)
        #expect(try store.journal(after: 0, limit: 100).flatMap(\.events).map(\.channelSeq) == [5, 6, 7, 8, 9, 10])
        let removed = try store.prune(RetentionPolicy(maxEventsPerChannel: 4), now: Timestamp(rawValue: 100), limit: 4)
        #expect(removed.events == 2)
        #expect(try store.prune(RetentionPolicy(maxEventsPerChannel: 4), now: Timestamp(rawValue: 100), limit: 4).events == 0)
        // The commands went with their events, and the five before them (no events) with them.
        #expect(try store.journal(after: 0, limit: 100).map(\.seq) == Array(seq - 3...seq))
        let sqlite = store as? SQLiteStore
        #expect(try sqlite?.prunedHistory() ?? PrunedHistory(commandsBefore: seq - 3, channels: [.init(cid: Self.general, throughChannelSeq: 6)])
            == PrunedHistory(commandsBefore: seq - 3, channels: [.init(cid: Self.general, throughChannelSeq: 6)]))
        let left = try store.journal(after: 0, limit: 100).flatMap(\.events).map(\.channelSeq)
        #expect(left == [7, 8, 9, 10])
        #expect(try store.channelEvents(Self.general, after: 7, through: 9).map(\.channelSeq) == [8, 9])
        #expect(try store.channelEvents(Self.general, after: 2, through: 10).map(\.audience) == [.watchers, .user("bob"), .watchers, .watchers])
        // By age: everything at or before 1970 plus a few seconds goes.
        let age = RetentionPolicy(maxAgeSeconds: 1)
        let oldestThree = try store.prune(age, now: Timestamp(rawValue: 1_800_000_000_000_000), limit: 3)
        #expect(oldestThree.entries == 3)
        #expect(try store.journal(after: 0, limit: 100).first?.seq == seq)
        let byAge = try store.prune(age, now: Timestamp(rawValue: 1_800_000_000_000_000), limit: 1_000)
        #expect(oldestThree.entries + byAge.entries == 4)
        #expect(try store.journal(after: 0, limit: 100).isEmpty)
        if let sqlite {  // export says all of it is gone
            #expect(try sqlite.prunedHistory() == PrunedHistory(commandsBefore: seq + 1, channels: [.init(cid: Self.general, throughChannelSeq: 10)]))
        }
        // The sequences and the clock go on from where they were: retention kept them before it
        // removed the entries they are read from.
        let stored = try store.load()
        #expect(stored.lastSeq == seq)
        #expect(stored.lastEventSeq == 10)
        #expect(stored.snapshot.clock == Timestamp(rawValue: 10))
        #expect(stored.streamSeqs[JournalStream.cluster.rawValue] == seq)
    }

    /// Issue 45: each entry is numbered in its stream too (a shard's, or the cluster's), and a load
    /// gives back where each stream stands: what a node follows other nodes' commits by.
    @Test(arguments: StoreKind.available) func eachStreamsNumbersAreStoredAndLoadedBack(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try Self.applyAndCommit(Array(Self.history.prefix(6)), to: store, engine: &engine, seq: &seq)
        let shard = JournalStream(ShardMap.shard(of: Self.general))
        let read = ReceiptsCommand.markRead(cid: Self.general, userID: "bob", messageID: nil)
        for number in 1...3 {
            seq += 1
            let entry = JournalEntry(seq: seq, stream: shard, streamSeq: Int64(number), at: engine.clock, command: read, events: [])
            try store.commit(CommitBatch(entries: [entry], footprint: StateFootprint(), engine: engine))
        }
        store.close()
        let reopened = try location.open()
        defer { reopened.close() }
        let stored = try reopened.load()
        var expected = Array(repeating: Int64(0), count: JournalStream.count)
        expected[JournalStream.cluster.rawValue] = 6
        expected[shard.rawValue] = 3
        #expect(stored.streamSeqs == expected)
        let journal = try reopened.journal(after: 0, limit: 100)
        #expect(journal.map(\.stream) == Array(repeating: .cluster, count: 6) + Array(repeating: shard, count: 3))
        #expect(journal.map(\.streamSeq) == [1, 2, 3, 4, 5, 6, 1, 2, 3])
        if let shared = reopened as? any SharedReceiptsStore {  // how a node catches up
            var applied = Array(repeating: Int64(0), count: JournalStream.count)
            applied[JournalStream.cluster.rawValue] = 6
            #expect(try shared.commands(after: applied, limit: 10).map(\.streamSeq) == [1, 2, 3])
            applied[shard.rawValue] = 1
            #expect(try shared.commands(after: applied, limit: 1).map(\.streamSeq) == [2])
        }
    }

    /// Issue 44: count retention bounds the commands too. A command goes once none of its events is
    /// left, and the commands that journaled no event go with the removed ones around them; a quiet
    /// channel's kept event keeps its command until that event goes as well.
    @Test(arguments: StoreKind.available) func retentionRemovesACommandOnceNoneOfItsEventsIsLeft(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var engine = ReceiptsEngine()
        var seq: Int64 = 0
        try Self.applyAndCommit(Array(Self.history.prefix(6)), to: store, engine: &engine, seq: &seq)
        #expect(seq == 6)
        var eventSeq: Int64 = 0
        func commit(_ cid: ChannelCID?, channelSeq: Int64 = 0) throws {
            seq += 1
            var events: [JournalEvent] = []
            if let cid {
                eventSeq += 1
                events.append(JournalEvent(seq: eventSeq, cid: cid, channelSeq: channelSeq, type: "message.read", audience: .watchers, json: Array("{}".utf8)))
            }
            let command = ReceiptsCommand.markRead(cid: cid ?? Self.general, userID: "bob", messageID: nil)
            try store.commit(CommitBatch(entries: [JournalEntry(seq: seq, at: Timestamp(rawValue: seq), command: command, events: events)],
                                         footprint: StateFootprint(), engine: engine))
        }
        try commit(Self.team, channelSeq: 1)                        // #7, the quiet channel
        try commit(nil)                                             // #8, no event
        for channelSeq in 1...6 { try commit(Self.general, channelSeq: Int64(channelSeq)) }  // #9-#14
        let keepTwo = RetentionPolicy(maxEventsPerChannel: 2)
        let first = try store.prune(keepTwo, now: Timestamp(rawValue: 100), limit: 1_000)
        #expect(first.events == 4)
        #expect(first.entries == 11, "#1-#12 but #7")
        #expect(try store.journal(after: 0, limit: 100).map(\.seq) == [7, 13, 14])
        if let sqlite = store as? SQLiteStore {
            #expect(try sqlite.prunedHistory() == PrunedHistory(commandsBefore: 13, channels: [.init(cid: Self.general, throughChannelSeq: 4)]))
        }
        // The quiet channel's first event goes: its command, already passed by the sweep, goes with it.
        for channelSeq in 2...4 { try commit(Self.team, channelSeq: Int64(channelSeq)) }  // #15-#17
        let second = try store.prune(keepTwo, now: Timestamp(rawValue: 100), limit: 1_000)
        #expect(second.events == 2)
        #expect(second.entries == 2, "#7 and #15")
        #expect(try store.journal(after: 0, limit: 100).map(\.seq) == [13, 14, 16, 17])
        #expect(try store.prune(keepTwo, now: Timestamp(rawValue: 100), limit: 1_000) == (0, 0))
    }

    /// One group commit can hold far more rows than one statement has parameters (PostgreSQL allows
    /// 65,535): 3,000 users, a channel of 3,000 members (13 columns each) and 3,000 confirmations,
    /// each with a journaled event, half of them without channel, sequence or audience (NULLs).
    @Test(arguments: StoreKind.available) func commitOfTensOfThousandsOfValuesRoundTrips(kind: StoreKind) throws {
        let location = try kind.makeLocation()
        defer { location.remove() }
        let store = try location.open()
        var engine = ReceiptsEngine()
        let userIDs = (0..<3_000).map { "user-\($0)" }
        var commands: [ReceiptsCommand] = userIDs.map { .upsertUser(User(id: $0, name: $0 == "user-7" ? nil : "User \($0)")) }
        commands.append(.createChannel(cid: Self.general, createdBy: "user-0", members: userIDs))
        commands.append(.sendMessage(cid: Self.general, userID: "user-0", draft: MessageDraft(id: "m1", text: "hello everyone")))
        commands += userIDs.dropFirst().map { .markRead(cid: Self.general, userID: $0, messageID: nil) }
        var entries: [JournalEntry] = []
        var footprint = StateFootprint()
        var now: Int64 = 1_763_000_000_000_000
        for command in commands {
            now += 1_000
            _ = try engine.apply(command, at: Timestamp(rawValue: now)).get()
            footprint.formUnion(engine.takeFootprint())
            var events: [JournalEvent] = []
            if case .markRead = command {
                let eventSeq = Int64(entries.count + 1)
                events.append(eventSeq % 2 == 0
                    ? JournalEvent(seq: eventSeq, cid: Self.general, channelSeq: eventSeq, type: "message.read", audience: .watchers, json: Array(#"{"n":\#(eventSeq)}"#.utf8))
                    : JournalEvent(seq: eventSeq, cid: nil, channelSeq: nil, type: "notification.mark_read", audience: nil, json: Array("{}".utf8)))
            }
            entries.append(JournalEntry(seq: Int64(entries.count + 1), at: engine.clock, command: command, events: events))
        }
        try store.commit(CommitBatch(entries: entries, footprint: footprint, engine: engine))
        store.close()
        let reopened = try location.open()
        let stored = try reopened.load()
        #expect(stored.lastSeq == Int64(commands.count))
        #expect(fingerprint(ReceiptsEngine(restoring: stored.snapshot)) == fingerprint(engine))
        let journal = try reopened.journal(after: 0, limit: 10_000)
        #expect(journal.map(\.command) == commands)
        // Read back, each event says where its entry is.
        #expect(journal.flatMap(\.events) == entries.flatMap { entry in entry.events.map { var event = $0; event.entry = entry.position; return event } })
        #expect(journal.flatMap(\.events).count == 2_999)
    }
}
