import CheckmarkCore
import CheckmarkServer
import CheckmarkStorage
import CheckmarkWire
import Testing

/// Issue 44: the journal keeps a `message.new` event's message object once, in storage; the event
/// is written again from the stored message byte for byte as it was sent.
@Suite("Journal: a message event written again from its stored message")
struct JournaledMessageJSONTests {
    static let cid = ChannelCID(type: "messaging", id: "general")

    /// Senders and messages whose JSON has what a naive splice gets wrong: braces, brackets, quotes
    /// and escapes in strings, nested custom values, Unicode.
    static let senders = [
        User(id: "alice", createdAt: Timestamp(rawValue: 1)),
        User(id: "b{o}b", name: #"Bob "the }builder{""#, image: "https://x/y.png?a=[1]",
             custom: [("nested", .object([("list", .array([.string("}"), .number(2), .null]))])), ("tab", .string("a\tb\\"))],
             createdAt: Timestamp(rawValue: 2), updatedAt: Timestamp(rawValue: 3)),
    ]
    static let messages = [
        Message(id: "m1", cid: cid, userID: "alice", text: "hello", createdAt: Timestamp(rawValue: 1_763_000_000_000_001)),
        Message(id: "m\"2", cid: cid, userID: "b{o}b", text: "{\"not\":\"json\"} ✓ \u{1}\n", kind: .system, createdAt: Timestamp(rawValue: 7)),
        Message(id: "r1", cid: cid, userID: "alice", text: "reply", createdAt: Timestamp(rawValue: 8), parentID: "m1", showInChannel: true, silent: true),
    ]

    /// The event as the server encodes it, and as storage gives it back: without the message object,
    /// with the stored message.
    static func journaled(_ message: Message, sender: User) throws -> (whole: [UInt8], read: JournalEvent) {
        let event = ReceiptsEvent(payload: .messageNew(message: message, sender: sender, watcherCount: 3), cid: cid,
                                  createdAt: message.createdAt, recipients: [])
        let encoded = StreamJSON.encode(event, channelSeq: 12)
        let range = try #require(encoded.messageObject)
        var reference = JournaledMessage(position: 4, offset: range.lowerBound, length: range.count)
        #expect(reference.fits(encoded.stored))
        let stored = reference.cut(encoded.stored)
        reference.message = message
        return (encoded.stored, JournalEvent(seq: 1, cid: cid, channelSeq: 12, type: "message.new", audience: .watchers, json: stored, message: reference))
    }

    /// Regression (review of issue 46): the message object of an event journaled before reactions
    /// and edits existed is written again from its row with the bytes it had then (its fields in the
    /// same order, none added), or the journal reads as corrupt after an upgrade.
    @Test func aMessageWithoutReactionsOrEditsIsWrittenAsBeforeThem() {
        let message = Self.messages[2]
        var user = JSONWriter()
        StreamJSON.write(user: Self.senders[0], into: &user)
        var times = JSONWriter()
        times.beginObject()
        times.field("created_at", message.createdAt)
        times.field("updated_at", message.createdAt)
        times.endObject()
        let stamps = String(decoding: times.bytes.dropFirst().dropLast(), as: UTF8.self)
        let asBefore = #"{"id":"r1","text":"reply","html":"","type":"regular","user":"# + String(decoding: user.bytes, as: UTF8.self)
            + #","cid":"messaging:general","# + stamps + #","parent_id":"m1","show_in_channel":true,"silent":true,"#
            + #""attachments":[],"mentioned_users":[],"latest_reactions":[],"own_reactions":[],"restricted_visibility":[],"#
            + #""reaction_counts":{},"reaction_scores":{},"custom":{},"reply_count":0,"deleted_reply_count":0,"#
            + #""mentioned_channel":false,"mentioned_here":false,"pinned":false,"shadowed":false}"#
        var written = JSONWriter()
        StreamJSON.write(message: message, sender: Self.senders[0], into: &written)
        #expect(String(decoding: written.bytes, as: UTF8.self) == asBefore)
    }

    @Test func aMessageEventIsWrittenAgainByteForByte() throws {
        for sender in Self.senders {
            for var message in Self.messages {
                message.userID = sender.id
                let (whole, read) = try Self.journaled(message, sender: sender)
                #expect(read.json.count < whole.count - message.text.utf8.count, "the message object, text and all, is not stored")
                #expect(try StreamJSON.wholeJSON(of: read) == whole)
                var cached = UserJSONCache()
                var channels = ChannelJSONCache()
                let event = ReceiptsEvent(payload: .messageNew(message: message, sender: sender, watcherCount: 3), cid: Self.cid,
                                          createdAt: message.createdAt, recipients: [])
                #expect(StreamJSON.encode(event, channelSeq: 12, users: &cached, channels: &channels).stored == whole,
                        "the caches write the same bytes")
                let restored = try StreamJSON.whole(read)
                #expect(restored.json == whole && restored.message == nil)
            }
        }
    }

    @Test func eventsOtherThanMessageNewAreNotCut() {
        let read = StreamJSON.encode(ReceiptsEvent(payload: .messageRead(user: Self.senders[0], lastReadMessageID: "m1"), cid: Self.cid,
                                                   createdAt: Timestamp(rawValue: 5), recipients: []))
        #expect(read.messageObject == nil)
    }

    /// A stored message that no longer writes the bytes that were sent (its text changed under the
    /// journal) is refused as corrupt, not sent as another event.
    @Test func aStoredMessageOfAnotherLengthIsCorrupt() throws {
        var (_, read) = try Self.journaled(Self.messages[0], sender: Self.senders[0])
        read.message?.message?.text = "hello!"
        #expect {
            _ = try StreamJSON.wholeJSON(of: read)
        } throws: { error in
            guard case StorageError.corrupt(_, let reason) = error else { return false }
            return reason.contains("written again")
        }
        read.message?.message = nil
        #expect(throws: StorageError.self) { _ = try StreamJSON.wholeJSON(of: read) }
        var (_, shifted) = try Self.journaled(Self.messages[0], sender: Self.senders[0])
        shifted.message?.offset += 1
        #expect(throws: StorageError.self) { _ = try StreamJSON.wholeJSON(of: shifted) }
    }
}
