import CheckmarkCore
import Testing

@testable import CheckmarkServer

@Suite("Commands go to the owner of their channel's shard; the rest stay where they arrive")
struct CommandRouteTests {
    static let general = ChannelCID(type: "messaging", id: "general")  // shard 92
    static let other = ChannelCID(type: "messaging", id: "a")  // shard 66

    @Test func aChannelsCommandsGoToItsShardsOwner() {
        let shard = CommandRoute.owner(ShardID(92))
        #expect(CommandRoute(.sendMessage(cid: Self.general, userID: "u", draft: MessageDraft(text: "x"))) == shard)
        #expect(CommandRoute(.markRead(cid: Self.general, userID: "u", messageID: nil)) == shard)
        #expect(CommandRoute(.markThreadRead(cid: Self.general, userID: "u", parentID: "p")) == shard)
        #expect(CommandRoute(.markUnread(cid: Self.general, userID: "u", from: .message("m"))) == shard)
        #expect(CommandRoute(.createChannel(cid: Self.general, createdBy: nil, members: [])) == shard)
        #expect(CommandRoute(.addMembers(cid: Self.general, userIDs: ["u"])) == shard)
        #expect(CommandRoute(.removeMembers(cid: Self.general, userIDs: ["u"])) == shard)
    }

    @Test func severalChannelsGoToTheirOwnerOnlyWhenTheyShareAShard() {
        let same = [ChannelReadTarget(cid: Self.general, messageID: nil), ChannelReadTarget(cid: Self.general, messageID: "m")]
        #expect(CommandRoute(.markReadMany(userID: "u", channels: same)) == .owner(ShardID(92)))
        let apart = [ChannelReadTarget(cid: Self.general, messageID: nil), ChannelReadTarget(cid: Self.other, messageID: nil)]
        #expect(CommandRoute(.markReadMany(userID: "u", channels: apart)) == .anyNode)
        #expect(CommandRoute(.markReadMany(userID: "u", channels: nil)) == .anyNode, "all of a user's channels")
        #expect(CommandRoute(.markDelivered(userID: "u", latest: [DeliveredTarget(cid: Self.other, messageID: "m")])) == .owner(ShardID(66)))
        #expect(CommandRoute(.markDelivered(userID: "u", latest: [])) == .anyNode)
    }

    @Test func usersAndTypesAreAppliedWhereTheyArriveAndConnectionsWhereTheyAre() {
        #expect(CommandRoute(.upsertUser(User(id: "u"))) == .anyNode)
        #expect(CommandRoute(.createChannelType(ChannelType(name: "team"))) == .anyNode)
        #expect(CommandRoute(.updateChannelType(name: "team", readEvents: false, deliveryEvents: nil)) == .anyNode)
        #expect(CommandRoute(.connect(connectionID: "c", userID: "u")) == .connection)
        #expect(CommandRoute(.watch(connectionID: "c", cid: Self.general)) == .connection)
        #expect(CommandRoute(.stopWatching(connectionID: "c", cid: Self.general)) == .connection)
        #expect(CommandRoute(.disconnect(connectionID: "c")) == .connection)
    }
}
