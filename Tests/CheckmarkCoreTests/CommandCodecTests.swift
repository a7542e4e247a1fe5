import CheckmarkCore
import Testing

/// The journal's text form: every command reads back as itself, and damaged entries are errors.
@Suite("Journal command codec")
struct CommandCodecTests {
    static let cid = ChannelCID(type: "messaging", id: "general")

    static let commands: [ReceiptsCommand] = [
        .upsertUser(User(id: "u\"1", name: "Ünïcode ✓", image: "https://x/y.png", custom: [("a", .array([.number(1.5), .null, .bool(true)]))],
                         privacy: PrivacySettings(readReceipts: false, deliveryReceipts: true, typingIndicators: false),
                         createdAt: Timestamp(rawValue: 1_763_000_000_000_001), updatedAt: Timestamp(rawValue: 1_763_000_000_000_002))),
        .updateUser(UserPatch(id: "u", set: [("name", .string("N"))], unset: ["image"])),
        .createChannelType(ChannelType(name: "team", readEvents: false, deliveryEvents: true)),
        .updateChannelType(name: "team", readEvents: nil, deliveryEvents: false),
        .createChannelType(ChannelType(name: "quiet", typingEvents: false, customEvents: false)),
        .updateChannelType(name: "quiet", readEvents: nil, deliveryEvents: nil, typingEvents: true, customEvents: false),
        .createChannel(cid: cid, createdBy: nil, members: ["a", "b"]),
        .addMembers(cid: cid, userIDs: ["c"]),
        .removeMembers(cid: cid, userIDs: ["a"]),
        .connect(connectionID: "c1", userID: "a"),
        .disconnect(connectionID: "c1"),
        .watch(connectionID: "c1", cid: cid),
        .stopWatching(connectionID: "c1", cid: cid),
        .sendMessage(cid: cid, userID: "a", draft: MessageDraft(id: nil, text: "line\nbreak\t\u{1}", kind: .system, parentID: "p", showInChannel: true, silent: true)),
        .markRead(cid: cid, userID: "a", messageID: nil),
        .markRead(cid: cid, userID: "a", messageID: "m"),
        .markReadMany(userID: "a", channels: nil),
        .markReadMany(userID: "a", channels: [ChannelReadTarget(cid: cid, messageID: nil), ChannelReadTarget(cid: ChannelCID(type: "t", id: "x"), messageID: "m")]),
        .markUnread(cid: cid, userID: "a", from: .message("m")),
        .markUnread(cid: cid, userID: "a", from: .timestamp(Timestamp(rawValue: 1_763_000_000_123_456))),
        .markDelivered(userID: "a", latest: [DeliveredTarget(cid: cid, messageID: "m")]),
    ]

    @Test(arguments: commands)
    func everyCommandReadsBackAsItself(_ command: ReceiptsCommand) throws {
        let decoded = try CommandCodec.decode(CommandCodec.encode(command))
        #expect(decoded == command)
        if case .upsertUser(let original) = command, case .upsertUser(let back) = decoded {
            #expect(back.name == original.name && back.image == original.image && back.createdAt == original.createdAt)
        }
    }

    @Test(arguments: [
        "not json", #"{"op":"teleport"}"#, #"{"op":"mark_read","cid":"no-colon","user_id":"a"}"#, #"{"op":"mark_unread","cid":"a:b","user_id":"a"}"#,
        #"{"op":"upsert_user"}"#, #"{"op":"add_members","cid":"a:b","members":[1]}"#,
    ])
    func damagedEntriesAreErrors(_ text: String) {
        #expect(throws: CommandCodec.Failure.self) { try CommandCodec.decode(Array(text.utf8)) }
    }
}
