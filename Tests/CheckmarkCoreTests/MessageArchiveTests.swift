import CheckmarkCore
import CheckmarkTestSupport
import PropertyBased
import Testing

/// Issue 44: a channel holds the texts of its newest messages only; older ones are archived once
/// storage confirmed them, and every rule still applies to them exactly.
@Suite("Message log: texts out of the window")
struct MessageArchiveTests {
    static let cid = ChannelCID(type: "messaging", id: "log")

    static func log(_ count: Int) -> MessageLog {
        var log = MessageLog(cid: cid)
        for i in 0..<count {
            log.append(Message(
                id: "m\(i)", cid: cid, userID: i % 2 == 0 ? "ann" : "ben", text: "text \(i)", kind: i == 3 ? .system : .regular,
                createdAt: Timestamp(rawValue: Int64(1_000 + i)), parentID: i == 4 ? "m1" : nil, showInChannel: false, silent: i == 5))
        }
        return log
    }

    @Test func textsLeaveOnlyOnceStoredAndOlderThanTheWindow() {
        var log = Self.log(10)
        log.markDurable(count: 0, keepingNewest: 0)
        #expect(log.indices.allSatisfy { log.holdsText(at: $0) }, "nothing stored: nothing archived, whatever the window")
        log.markDurable(count: 5, keepingNewest: 3)
        #expect(log.indices.map { log.holdsText(at: $0) } == Array(repeating: false, count: 5) + Array(repeating: true, count: 5))
        log.markDurable(count: 10, keepingNewest: 3)
        #expect(log.indices.map { log.holdsText(at: $0) } == Array(repeating: false, count: 7) + Array(repeating: true, count: 3))
        #expect(log.archivedCount == 7)
        log.markDurable(count: 4, keepingNewest: 3)
        #expect(log.archivedCount == 7 && log.durableCount == 10, "a confirmation never goes back")
    }

    @Test func everyIdIsFoundAtItsPositionAcrossGrowth() {
        var log = MessageLog(cid: Self.cid)
        let ids = (0..<5_000).map { i in i % 3 == 0 ? "m\(i)" : "a-much-longer-message-id-past-inline-strings-\(i)" }
        for (i, id) in ids.enumerated() {
            log.append(Message(id: id, cid: Self.cid, userID: "ann", text: "", createdAt: Timestamp(rawValue: Int64(i))))
        }
        #expect(ids.indices.allSatisfy { log.position(of: ids[$0]) == $0 && log.id(at: $0) == ids[$0] })
        for absent in ["", "m1", "m5000", "a-much-longer-message-id-past-inline-strings-5000", "m0 "] {
            #expect(log.position(of: absent) == nil, "\(absent)")
        }
    }

    @Test func textsInTheWindowStayRightAsOlderOnesAreDropped() {
        var log = MessageLog(cid: Self.cid)
        for i in 0..<1_000 {
            log.append(Message(id: "m\(i)", cid: Self.cid, userID: "ann", text: "text \(i)", createdAt: Timestamp(rawValue: Int64(i))))
            if i % 7 == 0 { log.markDurable(count: i + 1, keepingNewest: 10) }
        }
        log.markDurable(count: 1_000, keepingNewest: 10)
        #expect(log.indices.allSatisfy { log.text(at: $0) == ($0 >= 990 ? "text \($0)" : nil) })
        log.append(Message(id: "m1000", cid: Self.cid, userID: "ann", text: "last", createdAt: Timestamp(rawValue: 1_000)))
        #expect(log.message(at: 1_000)?.text == "last" && log.text(at: 990) == "text 990")
    }

    @Test func anArchivedMessageKeepsWhatTheRulesNeed() {
        let whole = Self.log(8)
        var archived = whole
        archived.markDurable(count: 8, keepingNewest: 0)
        for position in whole.indices {
            let message = whole[position]
            #expect(archived.message(at: position) == nil && archived.text(at: position) == nil)
            #expect(archived.id(at: position) == message.id && archived.userID(at: position) == message.userID)
            #expect(archived.createdAt(at: position) == message.createdAt && archived.parentID(at: position) == message.parentID)
            #expect(archived.isChannelMessage(at: position) == message.isChannelMessage && archived.isSilent(at: position) == message.silent)
            for user in ["ann", "ben", "cat"] {
                #expect(archived.countsAsUnread(at: position, forAuthor: archived.authorRef(of: user)) == message.countsAsUnread(for: user))
                #expect(archived.countsAsUnreadReply(at: position, for: user) == message.countsAsUnreadReply(for: user))
            }
            #expect(archived.message(at: position, text: message.text) == message, "the text storage gives back makes the message whole")
            #expect(archived.position(of: message.id) == position)
        }
        #expect(archived.lastCreatedAt == whole.lastCreatedAt)
    }

    @Test func aRecalledTextIsHeldWithoutUnarchivingTheMessage() {
        var log = Self.log(4)
        log.markDurable(count: 4, keepingNewest: 1)
        log.recall("text 1", at: 1, keepingAtMost: 2)
        #expect(log.text(at: 1) == "text 1" && log.holdsText(at: 1))
        #expect(log.text(at: 0) == nil && log.archivedCount == 3)
    }

    /// Titles of old threads do not pile up: a channel holds at most as many recalled texts as its
    /// window, the longest recalled going first (and read again when a command needs it).
    @Test func recalledTextsAreBoundedAndTheLongestRecalledGoesFirst() {
        var log = Self.log(10)
        log.markDurable(count: 10, keepingNewest: 1)
        for position in 0..<5 { log.recall("text \(position)", at: position, keepingAtMost: 3) }
        #expect(log.recalledCount == 3)
        #expect((0..<5).map { log.text(at: $0) } == [nil, nil, "text 2", "text 3", "text 4"])
        log.recall("text 2", at: 2, keepingAtMost: 3)
        #expect(log.recalledCount == 3, "recalling a held text again keeps one copy")
        log.recall("text 0", at: 0, keepingAtMost: 3)
        #expect((0..<5).map { log.text(at: $0) } == ["text 0", nil, nil, "text 3", "text 4"])
    }

    @Test func aRestoredLogArchivesWhatTheLoaderLeftOut() {
        var log = MessageLog(cid: Self.cid)
        for (i, message) in Self.log(6).heldMessages.enumerated() { log.appendStored(message, holdingText: i >= 4) }
        #expect(log.durableCount == 6 && log.archivedCount == 4)
        #expect(log.indices.map { log.holdsText(at: $0) } == [false, false, false, false, true, true])
    }

    /// Two engines take the same random commands: one archives every text it may after each command
    /// (window 3, storage confirming at once) and reads back the ones a command asks for, the other
    /// archives nothing. Their outcomes, read states, threads, counts and per-message receipts are
    /// the same throughout.
    @Test func anEngineThatArchivesDecidesAsOneThatDoesNot() async {
        let recalls = Counter()
        await propertyCheck(count: 80, input: Gen.int(in: 0...100_000).array(of: 20...160)) { numbers in
            var whole = ReceiptsPropertyTests.world()
            var windowed = whole.engine
            windowed.messageWindow = 3
            windowed.markAllMessagesDurable()
            for n in numbers {
                let command = ReceiptsPropertyTests.command(n, in: whole)
                whole.now += 1_000_000
                let at = Timestamp(rawValue: whole.now)
                let expected = whole.engine.apply(command, at: at)
                var got = windowed.apply(command, at: at)
                if case .failure(.archivedText(let cid, let position)) = got {
                    recalls.add()
                    windowed.recallText(whole.engine.channels[cid]!.messages[position].text, of: cid, at: position)
                    got = windowed.apply(command, at: at)
                }
                #expect(got == expected, "\(command)")
                windowed.markAllMessagesDurable()
                for (cid, channel) in whole.engine.channels {
                    let other = windowed.channels[cid]!
                    #expect(other.members == channel.members && other.threads.mapValues(\.reads) == channel.threads.mapValues(\.reads))
                    #expect(other.messages.count == channel.messages.count)
                    for viewer in ReceiptsPropertyTests.userIDs where channel.members[viewer] != nil {
                        #expect((try? windowed.readStates(of: cid, viewer: viewer)) == (try? whole.engine.readStates(of: cid, viewer: viewer)))
                        if !channel.messages.isEmpty {
                            let id = channel.messages.id(at: n % channel.messages.count)
                            #expect((try? windowed.receipts(of: id, in: cid, viewer: viewer)) == (try? whole.engine.receipts(of: id, in: cid, viewer: viewer)))
                        }
                    }
                }
                for user in ReceiptsPropertyTests.userIDs { #expect(windowed.counts(for: user) == whole.engine.counts(for: user)) }
            }
        }
        #expect(recalls.value > 0, "thread reads of archived parents were among the commands")
    }
}

/// Counts across the property's runs.
private final class Counter: @unchecked Sendable {
    private(set) var value = 0
    func add() { value += 1 }
}
