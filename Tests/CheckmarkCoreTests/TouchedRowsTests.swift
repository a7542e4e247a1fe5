import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// The engine's record of the durable rows it touched (what storage writes) is exactly what changed:
/// for every command of a scenario covering each command kind, the record equals the difference of
/// the durable state (as stored: derived counts left out) before and after; connection commands and
/// refused commands record nothing.
@Suite("Rows the engine touched")
struct TouchedRowsTests {
    static let general = ChannelCID(type: "messaging", id: "general")
    static let team = ChannelCID(type: "team", id: "core")

    static let scenario: [ReceiptsCommand] = [
        .upsertUser(User(id: "alice", name: "Alice")),
        .upsertUser(User(id: "bob")),
        .upsertUser(User(id: "carol")),
        .upsertUser(User(id: "dave")),
        .updateUser(UserPatch(id: "bob", set: [("name", .string("Bob")), ("team", .string("red"))])),
        .createChannelType(ChannelType(name: "team", readEvents: true, deliveryEvents: true)),
        .updateChannelType(name: "team", readEvents: nil, deliveryEvents: true),
        .updateChannelType(name: "messaging", readEvents: nil, deliveryEvents: true),
        .createChannel(cid: general, createdBy: "alice", members: ["alice", "bob", "carol"]),
        .createChannel(cid: general, createdBy: "alice", members: ["alice"]),  // exists: unchanged
        .createChannel(cid: team, createdBy: nil, members: ["alice", "bob"]),
        .addMembers(cid: general, userIDs: ["dave", "alice"]),
        .addMembers(cid: general, userIDs: ["dave"]),  // already a member: unchanged
        .connect(connectionID: "c1", userID: "bob"),
        .watch(connectionID: "c1", cid: general),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(id: "m1", text: "hello")),
        .sendMessage(cid: general, userID: "bob", draft: MessageDraft(text: "generated id")),
        .sendMessage(cid: team, userID: "bob", draft: MessageDraft(text: "in the team")),
        .sendMessage(cid: general, userID: "carol", draft: MessageDraft(id: "r1", text: "new thread", parentID: "m1")),
        .sendMessage(cid: general, userID: "carol", draft: MessageDraft(id: "r2", text: "again", parentID: "m1")),
        .sendMessage(cid: general, userID: "bob", draft: MessageDraft(id: "r3", text: "also here", parentID: "m1", showInChannel: true)),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(id: "r4", text: "own thread", parentID: "m1", silent: true)),
        .markThreadRead(cid: general, userID: "dave", parentID: "m1"),
        .markThreadRead(cid: general, userID: "dave", parentID: "m1"),  // nothing new: unchanged
        .markDelivered(userID: "dave", latest: [DeliveredTarget(cid: general, messageID: "m1")]),
        .markDelivered(userID: "dave", latest: [DeliveredTarget(cid: general, messageID: "m1")]),  // unchanged
        .markRead(cid: general, userID: "carol", messageID: "m1"),
        .markRead(cid: general, userID: "carol", messageID: nil),
        .markRead(cid: general, userID: "carol", messageID: nil),  // unchanged
        .markUnread(cid: general, userID: "carol", from: .message("m1")),
        .markUnread(cid: general, userID: "carol", from: .message("m1")),  // unchanged
        .markReadMany(userID: "alice", channels: nil),
        .markReadMany(userID: "bob", channels: [ChannelReadTarget(cid: general, messageID: nil), ChannelReadTarget(cid: team, messageID: nil)]),
        // Edits and deletes: a text edited, an edit keeping the text, a soft and a hard delete, and a
        // delete of a deleted message (unchanged).
        .updateMessage(cid: general, messageID: "m1", text: "hello, edited", by: "alice"),
        .updateMessage(cid: general, messageID: "m1", text: "hello, edited", by: nil),
        .deleteMessage(cid: general, messageID: "r2", hard: false, by: "carol"),
        .deleteMessage(cid: team, messageID: "core-1", hard: true, by: nil),
        .deleteMessage(cid: general, messageID: "r2", hard: false, by: nil),  // deleted already: unchanged
        .sendReaction(cid: general, messageID: "m1", userID: "bob", type: "like", score: 1, enforceUnique: false),
        .sendReaction(cid: general, messageID: "m1", userID: "bob", type: "love", score: 2, enforceUnique: true),
        .sendReaction(cid: general, messageID: "r1", userID: "dave", type: "like", score: 1, enforceUnique: false),
        .deleteReaction(cid: general, messageID: "r1", userID: "dave", type: "like"),
        .sendReaction(cid: general, messageID: "r3", userID: "dave", type: "like", score: 1, enforceUnique: false),
        .deleteMessage(cid: general, messageID: "r3", hard: true, by: nil),
        .stopWatching(connectionID: "c1", cid: general),
        .disconnect(connectionID: "c1"),
        .removeMembers(cid: general, userIDs: ["carol", "nobody"]),
        .removeMembers(cid: general, userIDs: ["carol"]),  // not a member any more: unchanged
        // Refused: each is validated before anything changes.
        .sendMessage(cid: general, userID: "carol", draft: MessageDraft(id: "x", text: "not a member")),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(id: "m1", text: "taken")),
        .sendMessage(cid: general, userID: "alice", draft: MessageDraft(text: "reply to a reply", parentID: "r1")),
        .markRead(cid: general, userID: "alice", messageID: "missing"),
        .markReadMany(userID: "alice", channels: [ChannelReadTarget(cid: general, messageID: nil), ChannelReadTarget(cid: team, messageID: "missing")]),
        .markDelivered(userID: "dave", latest: [DeliveredTarget(cid: general, messageID: "missing")]),
        .markThreadRead(cid: general, userID: "dave", parentID: "r1"),
        .markUnread(cid: general, userID: "alice", from: .message("missing")),
        .updateUser(UserPatch(id: "bob", set: [("id", .string("robert"))])),
        .createChannelType(ChannelType(name: "team")),
        .updateChannelType(name: "missing", readEvents: true, deliveryEvents: nil),
        .createChannel(cid: ChannelCID(type: "messaging", id: "other"), createdBy: "nobody", members: []),
        .addMembers(cid: general, userIDs: ["nobody"]),
        .removeMembers(cid: ChannelCID(type: "messaging", id: "missing"), userIDs: ["alice"]),
        .updateMessage(cid: general, messageID: "m1", text: "not the author", by: "bob"),
        .deleteMessage(cid: general, messageID: "missing", hard: false, by: nil),
        .updateMessage(cid: general, messageID: "r2", text: "deleted already", by: nil),
        .sendReaction(cid: general, messageID: "r2", userID: "bob", type: "like", score: 1, enforceUnique: false),
        .deleteReaction(cid: general, messageID: "m1", userID: "bob", type: "like"),
    ]

    @Test("the record of each command equals the durable rows that changed")
    func recordMatchesDifference() {
        var engine = ReceiptsEngine()
        var time: Int64 = 1_763_000_000_000_000
        var kinds: Set<String> = []
        for command in Self.scenario {
            time += 1_000_000
            let before = engine.snapshot()
            let result = engine.apply(command, at: Timestamp(rawValue: time))
            let record = engine.takeFootprint()
            let expected = Self.difference(before, engine.snapshot())
            #expect(record == expected, "\(command)")
            switch result {
            case .success(let outcome):
                if !outcome.changed || !ReceiptsEngine.isDurable(command) { #expect(record.isEmpty, "\(command)") }
                if outcome.changed && ReceiptsEngine.isDurable(command) {
                    #expect(!record.isEmpty, "\(command)")
                    kinds.insert(String("\(command)".prefix { $0 != "(" }))
                }
            case .failure:
                #expect(record.isEmpty, "\(command)")
            }
        }
        // Every durable command kind changed something at least once.
        #expect(kinds.count == 17, "\(kinds.sorted())")
        #expect(engine.takeFootprint().isEmpty)
    }

    @Test("the record holds the last command's rows only, and taking it into a batch empties it")
    func recordHoldsTheLastCommand() {
        var engine = ReceiptsEngine()
        _ = engine.apply(.upsertUser(User(id: "a")), at: Timestamp(rawValue: 1))
        _ = engine.apply(.upsertUser(User(id: "b")), at: Timestamp(rawValue: 2))
        #expect(engine.touched.users == ["b"], "a record left untaken does not grow with later commands")
        var batch = StateFootprint()
        batch.users = ["c"]
        engine.takeFootprint(into: &batch)
        #expect(batch.users == ["b", "c"])
        #expect(engine.touched.isEmpty)
        _ = engine.apply(.upsertUser(User(id: "d")), at: Timestamp(rawValue: 3))
        _ = engine.apply(.connect(connectionID: "c1", userID: "d"), at: Timestamp(rawValue: 4))
        #expect(engine.touched.isEmpty, "a connection command starts a new, empty record")
    }

    /// The durable rows (as storage holds them) that differ between two states.
    static func difference(_ old: ReceiptsSnapshot, _ new: ReceiptsSnapshot) -> StateFootprint {
        var footprint = StateFootprint()
        let oldUsers = Dictionary(uniqueKeysWithValues: old.users.map { ($0.id, $0) })
        for user in new.users where oldUsers[user.id] != user { footprint.users.insert(user.id) }
        let oldTypes = Dictionary(uniqueKeysWithValues: old.channelTypes.map { ($0.name, $0) })
        for type in new.channelTypes where oldTypes[type.name] != type { footprint.channelTypes.insert(type.name) }
        let oldChannels = Dictionary(uniqueKeysWithValues: old.channels.map { ($0.cid, $0) })
        for channel in new.channels {
            let cid = channel.cid
            guard let previous = oldChannels[cid], previous.createdBy == channel.createdBy,
                  previous.createdAt == channel.createdAt, previous.memberOrder == channel.memberOrder,
                  previous.members.mapValues(\.createdAt) == channel.members.mapValues(\.createdAt) else {
                footprint.channels.insert(cid)  // a rewrite covers its members and thread reads
                continue
            }
            for (userID, member) in channel.members where stored(previous.members[userID]!.read) != stored(member.read) {
                footprint.members.insert(.init(cid: cid, userID: userID))
            }
            for position in previous.messages.count..<channel.messages.count {
                footprint.messages.insert(.init(cid: cid, position: position))
            }
            // Messages only append; an edit or a delete changes one in place (its `message_edits` row).
            let before = previous.messages.heldMessages
            for (position, message) in channel.messages.heldMessages.prefix(before.count).enumerated() where message != before[position] {
                var sent = message, previouslySent = before[position]
                (sent.text, sent.revision, sent.reactions, previouslySent.text, previouslySent.revision, previouslySent.reactions) = ("", nil, [], "", nil, [])
                #expect(sent == previouslySent, "only the text, the revision and the reactions change")
                if message.text != before[position].text || message.revision != before[position].revision {
                    footprint.messageEdits.insert(.init(cid: cid, position: position))
                }
                if message.reactions != before[position].reactions { footprint.messageReactions.insert(.init(cid: cid, position: position)) }
            }
            for (parentID, thread) in channel.threads {
                for (userID, read) in thread.reads where previous.threads[parentID]?.reads[userID].map(stored) != stored(read) {
                    footprint.threadReads.insert(.init(cid: cid, parentID: parentID, userID: userID))
                }
            }
        }
        return footprint
    }

    /// A member's read state without its derived unread count (not stored).
    static func stored(_ read: ReadState) -> ReadState {
        var read = read
        read.unreadMessages = 0
        return read
    }

    /// A thread read state without its derived unread replies (not stored).
    static func stored(_ read: ThreadReadState) -> ThreadReadState {
        var read = read
        read.unreadReplies = 0
        return read
    }
}
