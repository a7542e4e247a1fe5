import CheckmarkCore
import CheckmarkTestSupport
import Testing

/// Issue 45: what a channel's commands decide depends on that channel's state and the command alone,
/// so that engines that applied other channels' commands in another order (each shard's owner
/// commits its own) still agree on every channel: message ids are generated per channel, and a
/// command applied again from the journal keeps the time it was first applied at.
@Suite("Channel-local state")
struct ChannelLocalStateTests {
    static let general = ChannelCID(type: "messaging", id: "general")
    static let random = ChannelCID(type: "messaging", id: "random")

    static let setUp: [ReceiptsCommand] = [
        .upsertUser(User(id: "alice")),
        .upsertUser(User(id: "bob")),
        .createChannel(cid: general, createdBy: "alice", members: ["alice", "bob"]),
        .createChannel(cid: random, createdBy: "alice", members: ["alice", "bob"]),
    ]

    static func engine(applying commands: [ReceiptsCommand]) throws -> ReceiptsEngine {
        var engine = ReceiptsEngine()
        for (index, command) in commands.enumerated() {
            _ = try engine.apply(command, at: Timestamp(rawValue: Int64(index + 1) * 1_000_000)).get()
        }
        return engine
    }

    static func send(_ cid: ChannelCID, id: String? = nil) -> ReceiptsCommand {
        .sendMessage(cid: cid, userID: "alice", draft: MessageDraft(id: id, text: "hi"))
    }

    static func ids(_ engine: ReceiptsEngine, _ cid: ChannelCID) -> [String] {
        engine.channels[cid]!.messages.heldMessages.map(\.id)
    }

    @Test func generatedIDsAreNumberedWithinTheirChannel() throws {
        let engine = try Self.engine(applying: Self.setUp + [
            Self.send(Self.general), Self.send(Self.random), Self.send(Self.random), Self.send(Self.general),
        ])
        #expect(Self.ids(engine, Self.general) == ["general-1", "general-2"])
        #expect(Self.ids(engine, Self.random) == ["random-1", "random-2"])
    }

    @Test func aGeneratedIDSkipsOneTheSenderTookAlready() throws {
        let engine = try Self.engine(applying: Self.setUp + [
            Self.send(Self.general, id: "general-2"), Self.send(Self.general), Self.send(Self.general),
        ])
        #expect(Self.ids(engine, Self.general) == ["general-2", "general-3", "general-4"])
    }

    @Test func anotherChannelsCommandsInAnotherOrderLeaveAChannelsIDsAsTheyWere() throws {
        let first = try Self.engine(applying: Self.setUp + [Self.send(Self.random), Self.send(Self.general), Self.send(Self.general)])
        let second = try Self.engine(applying: Self.setUp + [Self.send(Self.general), Self.send(Self.general)])
        #expect(Self.ids(first, Self.general) == Self.ids(second, Self.general))
    }

    @Test func aReplayedCommandKeepsItsTimeWhenTheClockIsPastIt() throws {
        var engine = try Self.engine(applying: Self.setUp + [Self.send(Self.general), Self.send(Self.random)])
        let past = Timestamp(rawValue: 5_500_000)
        #expect(engine.clock > past)
        let clock = engine.clock
        _ = try engine.replay(.markRead(cid: Self.general, userID: "bob", messageID: nil), at: past).get()
        #expect(engine.channels[Self.general]!.members["bob"]!.read.lastRead == past)
        #expect(engine.clock == clock, "the clock never runs backwards")
        _ = try engine.apply(.markRead(cid: Self.random, userID: "bob", messageID: nil), at: past).get()
        #expect(engine.channels[Self.random]!.members["bob"]!.read.lastRead == clock, "a new command is applied at the clock")
    }
}
