import CheckmarkCore
import CheckmarkTestSupport
import PropertyBased
import Testing

/// Invariants over random command sequences with many users, channels and privacy flips.
@Suite("Receipts properties")
struct ReceiptsPropertyTests {
    static let userIDs = ["u0", "u1", "u2", "u3", "u4", "u5"]
    static let cids = (0..<3).map { ChannelCID(type: $0 == 2 ? "quiet" : "messaging", id: "c\($0)") }

    /// Builds the world, then interprets each number as one command.
    static func world() -> Scenario {
        var s = Scenario()
        for id in userIDs { _ = try? s.run(.upsertUser(User(id: id))) }
        _ = try? s.run(.createChannelType(ChannelType(name: "quiet", readEvents: false, deliveryEvents: false)))
        _ = try? s.run(.updateChannelType(name: "messaging", readEvents: true, deliveryEvents: true))
        for (i, cid) in cids.enumerated() {
            _ = try? s.run(.createChannel(cid: cid, createdBy: "u0", members: Array(userIDs.prefix(3 + i))))
        }
        for (i, id) in userIDs.enumerated() {
            _ = try? s.run(.connect(connectionID: "k\(i)", userID: id))
            _ = try? s.run(.connect(connectionID: "w\(i)", userID: id))
            for cid in cids { _ = try? s.run(.watch(connectionID: "w\(i)", cid: cid)) }
        }
        return s
    }

    static func command(_ n: Int, in s: Scenario) -> ReceiptsCommand {
        let user = userIDs[n % userIDs.count]
        let cid = cids[(n / 7) % cids.count]
        let messages = s.engine.channels[cid]?.messages.heldMessages ?? []
        let someMessage = messages.isEmpty ? "none" : messages[(n / 13) % messages.count].id
        switch (n / 29) % 12 {
        case 0, 1, 2:
            let parent = n % 5 == 0 ? messages.first { $0.parentID == nil }?.id : nil
            return .sendMessage(cid: cid, userID: user, draft: MessageDraft(
                text: "t", kind: n % 11 == 0 ? .system : .regular, parentID: parent, showInChannel: n % 3 == 0, silent: n % 9 == 0))
        case 3: return .markRead(cid: cid, userID: user, messageID: nil)
        case 4: return .markRead(cid: cid, userID: user, messageID: someMessage)
        case 5: return .markUnread(cid: cid, userID: user, from: .message(someMessage))
        case 6, 7: return .markDelivered(userID: user, latest: [DeliveredTarget(cid: cid, messageID: someMessage)])
        case 8:
            guard n % 2 == 1, let parent = messages.first(where: { $0.parentID == nil })?.id else { return .markReadMany(userID: user, channels: nil) }
            return .markThreadRead(cid: cid, userID: user, parentID: parent)
        case 9:
            let flag = n % 2 == 0 ? "read_receipts" : "delivery_receipts"
            return .updateUser(UserPatch(id: user, set: [("privacy_settings", .object([(flag, .object([("enabled", .bool(n % 4 < 2))]))]))]))
        case 10: return n % 2 == 0 ? .addMembers(cid: cid, userIDs: [user]) : .removeMembers(cid: cid, userIDs: [user])
        default:
            switch n % 4 {
            case 0: return .stopWatching(connectionID: "w\(n % userIDs.count)", cid: cid)
            case 1: return .watch(connectionID: "w\(n % userIDs.count)", cid: cid)
            // Connections come and go: `k` ones, which never watch, and watching `w` ones.
            case 2: return .disconnect(connectionID: "\(n % 3 == 0 ? "w" : "k")\((n / 4) % userIDs.count)")
            default: return .connect(connectionID: "\(n % 3 == 0 ? "w" : "k")\((n / 4) % userIDs.count)", userID: userIDs[(n / 4) % userIDs.count])
            }
        }
    }

    @Test func invariantsHoldOverRandomCommandSequences() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...100_000).array(of: 20...160)) { numbers in
            var s = Self.world()
            for n in numbers {
                let command = Self.command(n, in: s)
                let before = s.engine
                let privacyBefore = before.users
                guard case .success(let outcome) = s.engine.apply(command, at: Timestamp(rawValue: s.now + 1_000_000)) else {
                    #expect(s.engine.channels.mapValues(\.messages.heldMessages) == before.channels.mapValues(\.messages.heldMessages), "a refused command changes nothing")
                    continue
                }
                s.now += 1_000_000
                Self.checkPointers(before: before, after: s.engine, command: command)
                Self.checkCounts(s.engine)
                Self.checkMemberOrder(s.engine)
                Self.checkPrivacy(outcome, engine: s.engine, privacy: privacyBefore)
                Self.checkNotifiedConnections(outcome, engine: s.engine, command: command)
            }
        }
    }

    /// A restored engine numbers its users' totals afresh (in the snapshot's order, not in the order
    /// they first needed totals); the commands after the restore still keep every member's totals and
    /// every recipient's counts right.
    @Test func totalsStayRightAfterARestore() async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...100_000).array(of: 20...120)) { numbers in
            var s = Self.world()
            let half = numbers.count / 2
            for n in numbers[..<half] {
                let command = Self.command(n, in: s)
                s.now += 1_000_000
                _ = s.engine.apply(command, at: Timestamp(rawValue: s.now))
            }
            // A restart: the durable state comes back, the connections open and watch again.
            s.engine = ReceiptsEngine(restoring: s.engine.snapshot())
            for (i, id) in Self.userIDs.enumerated() {
                _ = try? s.run(.connect(connectionID: "k\(i)", userID: id))
                _ = try? s.run(.connect(connectionID: "w\(i)", userID: id))
                for cid in Self.cids { _ = try? s.run(.watch(connectionID: "w\(i)", cid: cid)) }
            }
            Self.checkCounts(s.engine)
            for n in numbers[half...] {
                let command = Self.command(n, in: s)
                let privacyBefore = s.engine.users
                s.now += 1_000_000
                guard case .success(let outcome) = s.engine.apply(command, at: Timestamp(rawValue: s.now)) else { continue }
                Self.checkCounts(s.engine)
                Self.checkPrivacy(outcome, engine: s.engine, privacy: privacyBefore)
            }
        }
    }

    /// Pointers never regress except by mark unread; delivered is never behind read.
    static func checkPointers(before: ReceiptsEngine, after: ReceiptsEngine, command: ReceiptsCommand) {
        for (cid, channel) in after.channels {
            for (userID, member) in channel.members {
                let read = member.read
                #expect(read.deliveredPosition >= read.readPosition)
                guard let old = before.channels[cid]?.members[userID]?.read else { continue }
                #expect(read.deliveredPosition >= old.deliveredPosition)
                if case .markUnread(let c, let u, _) = command, c == cid, u == userID { continue }
                #expect(read.readPosition >= old.readPosition)
                #expect(read.lastRead >= old.lastRead)
            }
        }
    }

    /// Each channel's count of its members' connections is a recount, and `notification.message_new`
    /// reaches exactly the members' connections that are not watching (the engine skips looking when
    /// the count says every one of them watches).
    static func checkNotifiedConnections(_ outcome: ReceiptsOutcome, engine: ReceiptsEngine, command: ReceiptsCommand) {
        for channel in engine.channels.values {
            let recount = channel.members.keys.reduce(0) { $0 + engine.connections(of: $1).count }
            #expect(channel.memberConnections == recount, "members' connections of \(channel.cid)")
        }
        guard case .sendMessage(let cid, _, _) = command, let channel = engine.channels[cid],
              let event = outcome.events.first(where: { $0.type == "notification.message_new" }) else { return }
        let expected = Set(channel.members.keys.flatMap { engine.connections(of: $0) }.filter { !channel.watcherSet.contains($0) })
        #expect(Set(event.recipients.map(\.connection)) == expected)
    }

    /// Members are listed in join-time order, so the newest are the last (the read-state listing relies on it).
    static func checkMemberOrder(_ engine: ReceiptsEngine) {
        for channel in engine.channels.values {
            let joined = channel.memberOrder.map { channel.members[$0]!.createdAt }
            #expect(zip(joined, joined.dropFirst()).allSatisfy { $0 <= $1 }, "members of \(channel.cid) out of join order")
        }
    }

    /// unread_messages equals a recount; totals equal the sum over the user's channels.
    static func checkCounts(_ engine: ReceiptsEngine) {
        var sums: [String: UnreadCounts] = [:]
        for channel in engine.channels.values {
            for (userID, member) in channel.members {
                let recount = channel.messages.heldMessages[member.read.readPosition...].filter { $0.countsAsUnread(for: userID) }.count
                #expect(member.read.unreadMessages == recount)
                sums[userID, default: UnreadCounts()].totalUnread += recount
                if recount > 0 { sums[userID, default: UnreadCounts()].unreadChannels += 1 }
            }
            for thread in channel.threads.values {
                for (userID, read) in thread.reads {
                    #expect(channel.members[userID] != nil, "only members participate in threads")
                    let recount = thread.replyPositions.dropFirst(read.readCount).filter { channel.messages[$0].countsAsUnreadReply(for: userID) }.count
                    #expect(read.unreadReplies == recount)
                    if recount > 0 { sums[userID, default: UnreadCounts()].unreadThreads += 1 }
                }
            }
        }
        for id in userIDs { #expect(engine.counts(for: id) == (sums[id] ?? UnreadCounts())) }
    }

    /// No receipt of a user who hides it reaches anyone else, no response shows it, and every
    /// recipient's counts equal its user's totals.
    static func checkPrivacy(_ outcome: ReceiptsOutcome, engine: ReceiptsEngine, privacy: UserTable) {
        for event in outcome.events {
            for recipient in event.recipients {
                if let counts = recipient.counts { #expect(counts == engine.counts(for: recipient.userID)) }
                guard let subject = event.payload.receiptSubject, subject != recipient.userID else { continue }
                let settings = engine.users[subject]!.privacy
                switch event.payload {
                case .messageRead: #expect(settings.readReceipts)
                case .messageDelivered: #expect(settings.deliveryReceipts)
                default: Issue.record("\(event.type) about \(subject) reached \(recipient.userID)")
                }
            }
        }
        for cid in cids {
            for viewer in userIDs where engine.channels[cid]?.members[viewer] != nil {
                for view in (try? engine.readStates(of: cid, viewer: viewer)) ?? [] where view.user.id != viewer {
                    let settings = engine.users[view.user.id]!.privacy
                    if !settings.readReceipts { #expect(view.lastRead == nil && view.unreadMessages == nil && view.lastReadMessageID == nil) }
                    if !settings.deliveryReceipts { #expect(view.lastDeliveredAt == nil && view.lastDeliveredMessageID == nil) }
                }
            }
        }
    }
}
