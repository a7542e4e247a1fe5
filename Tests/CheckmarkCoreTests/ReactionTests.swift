import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Rules R1-R5 (docs/protocol.md, Reactions): who may react, one reaction per user and type, what
/// `enforce_unique` replaces, who is told, and that reactions move no count or pointer.
@Suite("Reactions, rules R1-R5")
struct ReactionTests {
    static func trio() throws -> Scenario {
        try MessageEditTests.trio()
    }

    static func react(_ user: String, _ type: String, to id: String = "m1", score: Int = 1, unique: Bool = false) -> ReceiptsCommand {
        .sendReaction(cid: Scenario.general, messageID: id, userID: user, type: type, score: score, enforceUnique: unique)
    }

    static func unreact(_ user: String, _ type: String, from id: String = "m1") -> ReceiptsCommand {
        .deleteReaction(cid: Scenario.general, messageID: id, userID: user, type: type)
    }

    static func reactions(_ s: Scenario, _ id: String = "m1") -> [String] {
        s.message(id).reactions.map { "\($0.userID):\($0.type):\($0.score)" }
    }

    // MARK: R1

    @Test func membersReactOthersAreRefused() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.users("z")
        #expect(s.refuse(Self.react("z", "like")) == .notAMember(user: "z", cid: Scenario.general))
        #expect(s.refuse(Self.react("nobody", "like")) == .unknownUser("nobody"))
        #expect(s.refuse(Self.react("b", "like", to: "nope")) == .unknownMessage("nope"))
        for (type, score) in [("", 1), (String(repeating: "x", count: 256), 1), ("tab\there", 1), ("like", 0), ("like", -3)] {
            #expect(s.refuse(Self.react("b", type, score: score)) != nil, "\(type) \(score)")
        }
        try s.run(MessageEditTests.delete("m1", by: "a"))
        #expect(s.refuse(Self.react("b", "like")) == .invalidArgument("message m1 is deleted: no reactions"))
        #expect(Self.reactions(s).isEmpty)
    }

    // MARK: R2, R3

    @Test func aReactionReachesEveryWatcherAndCarriesTheMessageAsItIsNow() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        let outcome = try s.run(Self.react("b", "like"))
        #expect(outcome.events.map(\.type) == ["reaction.new"])
        #expect(outcome.receivers("reaction.new") == ["a1", "b1", "c1"])
        guard case .reaction(.new, let message, let sender, let reaction, let user, _, _) = outcome.events[0].payload else {
            Issue.record("not reaction.new"); return
        }
        #expect(sender.id == "a" && user.id == "b" && reaction == Reaction(userID: "b", type: "like", createdAt: Timestamp(rawValue: s.now)))
        #expect(message.reactions == [reaction] && message.reactionUsers["b"]?.name == "B", "the reactor's profile goes with the event")
        #expect(outcome.result == .reaction(message, reaction))
        #expect(outcome.events[0].isReplayable && outcome.events[0].audience == .watchers)
    }

    @Test func theSameTypeAgainTakesTheNewScoreAndKeepsItsPlace() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.run(Self.react("b", "clap", score: 3))
        let first = s.now
        try s.run(Self.react("c", "like"))
        let again = try s.run(Self.react("b", "clap", score: 7))
        #expect(Self.reactions(s) == ["b:clap:7", "c:like:1"])
        #expect(s.message("m1").reactions[0].createdAt == Timestamp(rawValue: first) && s.message("m1").reactions[0].updatedAt == Timestamp(rawValue: s.now))
        #expect(again.events.map(\.type) == ["reaction.new"], "as Stream's SDKs count a reaction sent again")
    }

    @Test func enforceUniqueReplacesTheUsersOtherReactions() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.run(Self.react("b", "like"))
        try s.run(Self.react("b", "love"))
        try s.run(Self.react("c", "like"))
        let outcome = try s.run(Self.react("b", "wow", unique: true))
        #expect(Self.reactions(s) == ["c:like:1", "b:wow:1"])
        #expect(outcome.events.map(\.type) == ["reaction.updated"])
        let alone = try s.run(Self.react("a", "wow", unique: true))
        #expect(alone.events.map(\.type) == ["reaction.new"], "nothing replaced: a new one")
    }

    @Test func oneUserHasAtMostTheLimitOfTypesOnAMessage() throws {
        var s = try Self.trio()
        s.engine.maxReactionsPerUser = 2
        try s.send("a", "m1")
        try s.run(Self.react("b", "t1"))
        try s.run(Self.react("b", "t2"))
        #expect(s.refuse(Self.react("b", "t3")) == .invalidArgument("user b has 2 reaction types on message m1, the limit"))
        try s.run(Self.react("b", "t2", score: 5))
        try s.run(Self.react("c", "t3"))
        try s.run(Self.react("b", "t3", unique: true))
        #expect(Self.reactions(s) == ["c:t3:1", "b:t3:1"])
    }

    // MARK: R4

    @Test func takingAReactionBackTellsEveryWatcher() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.run(Self.react("b", "like"))
        #expect(s.refuse(Self.unreact("c", "like")) == .unknownReaction(user: "c", type: "like", messageID: "m1"))
        let outcome = try s.run(Self.unreact("b", "like"))
        #expect(outcome.receivers("reaction.deleted") == ["a1", "b1", "c1"])
        #expect(Self.reactions(s).isEmpty)
        #expect(s.refuse(Self.unreact("b", "like")) == .unknownReaction(user: "b", type: "like", messageID: "m1"))
    }

    @Test func aHardDeleteTakesTheReactionsWithIt() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.run(Self.react("b", "like"))
        try s.run(MessageEditTests.delete("m1", by: "a"))
        #expect(Self.reactions(s) == ["b:like:1"], "a soft delete keeps them")
        try s.run(MessageEditTests.delete("m1", hard: true, by: nil))
        #expect(Self.reactions(s).isEmpty)
    }

    // MARK: R5

    @Test func reactionsMoveNoUnreadCountNorPointer() throws {
        var s = try Self.trio()
        try s.send("a", "m1")
        try s.send("a", "m2")
        let (a, b, totals) = (s.read("a"), s.read("b"), s.engine.totals)
        try s.run(Self.react("b", "like"))
        try s.run(Self.react("c", "like", to: "m2"))
        try s.run(Self.unreact("b", "like"))
        #expect(s.read("a") == a && s.read("b") == b && s.engine.totals == totals)
    }

    @Test func reactionsRoundTripThroughTheJournalCodec() throws {
        for command in [Self.react("b", "like"), Self.react("b", "clap \"x\"", score: 12, unique: true), Self.unreact("b", "like")] {
            #expect(try CommandCodec.decode(CommandCodec.encode(command)) == command)
        }
    }
}
