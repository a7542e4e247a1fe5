import CheckmarkCore
import CheckmarkTestSupport
import CheckmarkWire
import Testing

/// Events in Stream's JSON shapes, encoded once, with only the counts varying per recipient.
@Suite("Event encoding")
struct EventEncodingTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func messageReadHasStreamsFieldNames() throws {
        let user = User(id: "b", name: "B", createdAt: Timestamp(rawValue: 0))
        let event = ReceiptsEvent(
            payload: .messageRead(user: user, lastReadMessageID: "m1"), cid: ChannelCID(type: "messaging", id: "general"),
            createdAt: Timestamp(rawValue: 1_763_000_000_123_456), recipients: [])
        let encoded = StreamJSON.encode(event)
        #expect(!encoded.carriesCounts)
        #expect(Self.text(encoded.json(for: nil)) == #"{"type":"message.read","cid":"messaging:general","channel_id":"general","channel_type":"messaging","created_at":"2025-11-13T02:13:20.123456Z","custom":{},"user":{"id":"b","name":"B","role":"user","custom":{},"banned":false,"online":false,"language":"","teams":[],"blocked_user_ids":[],"created_at":"1970-01-01T00:00:00.000000Z","updated_at":"1970-01-01T00:00:00.000000Z"},"last_read_message_id":"m1"}"#)
    }

    @Test func storedFormComesBackAsTheSameEventWithItsChannelSeq() {
        let user = User(id: "b", createdAt: Timestamp(rawValue: 0))
        let cid = ChannelCID(type: "messaging", id: "general")
        let read = StreamJSON.encode(ReceiptsEvent(
            payload: .messageRead(user: user, lastReadMessageID: "m1"), cid: cid, createdAt: Timestamp(rawValue: 5), recipients: []),
            channelSeq: 7)
        let mark = StreamJSON.encode(ReceiptsEvent(
            payload: .notificationMarkRead(user: user, lastReadMessageID: "m1", channel: nil), cid: cid, createdAt: Timestamp(rawValue: 5), recipients: []),
            channelSeq: 8)
        #expect(Self.text(read.stored).contains(#""channel_seq":7,"#))
        #expect(EncodedEvent(stored: read.stored, type: "message.read") == read)
        #expect(EncodedEvent(stored: mark.stored, type: "notification.mark_read") == mark)
        let counts = UnreadCounts(totalUnread: 3, unreadChannels: 1)
        #expect(EncodedEvent(stored: mark.stored, type: "notification.mark_read").json(for: counts) == mark.json(for: counts))
        #expect(Self.text(mark.json(for: counts)).hasSuffix(#""unread_count":3,"total_unread_count":3,"unread_channels":1,"unread_threads":0}"#))
    }

    /// Stream's iOS SDK decodes a `notification.mark_read` without `channel` as mark-all-read.
    @Test func aChannelsNotificationMarkReadCarriesItsChannelObjectAndMarkAllReadNone() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("b1", as: "b")
        try s.send("a", "m1")
        let one = try #require(try s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil)).events("notification.mark_read").first)
        let oneJSON = Self.text(StreamJSON.encode(one).json(for: one.recipients[0].counts))
        #expect(oneJSON.contains(#""thread_id""#) == false)
        #expect(oneJSON.contains(#","channel":{"id":"general","type":"messaging","cid":"messaging:general","#))
        try s.send("a", "m2")
        let all = try #require(try s.run(.markReadMany(userID: "b", channels: nil)).events("notification.mark_read").first)
        let allJSON = Self.text(StreamJSON.encode(all).json(for: all.recipients[0].counts))
        #expect(!allJSON.contains(#""channel""#) && !allJSON.contains(#""cid""#))
    }

    @Test func storedJSONWithoutItsClosingBraceIsClosedTheSameWayForEveryRecipient() {
        let open = EncodedEvent(stored: Array(#"{"type":"message.read""#.utf8), type: "message.read")
        #expect(Self.text(open.json(for: nil)) == #"{"type":"message.read"}"#)
        #expect(open.json(for: nil) == Array(open.prefix) + open.suffix(for: nil))
    }

    @Test func countsVaryOnlyInTheSuffix() throws {
        var s = Scenario()
        try s.users("a", "b")
        try s.channel(members: ["a", "b"])
        try s.connect("a1", as: "a")
        try s.connect("b1", as: "b")
        let event = try #require(try s.send("a", "m1").events("message.new").first)
        let encoded = StreamJSON.encode(event)
        #expect(encoded.carriesCounts)
        let forB = Self.text(encoded.json(for: event.recipients[1].counts))
        #expect(forB.hasSuffix(#","unread_count":1,"total_unread_count":1,"unread_channels":1,"unread_threads":0}"#))
        #expect(forB.contains(#""message_id":"m1""#) && forB.contains(#""watcher_count":2"#))
    }

    @Test func aCidIsWrittenAsTypeColonIDEscaped() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("cid", ChannelCID(type: "messaging", id: "general"))
        writer.field("odd", ChannelCID(type: "a\"b", id: "c\\d"))
        writer.endObject()
        #expect(Self.text(writer.bytes) == #"{"cid":"messaging:general","odd":"a\"b:c\\d"}"#)
    }

    @Test func stringsAreEscaped() {
        var writer = JSONWriter()
        writer.string("quote \" backslash \\ newline \n tab \t bell \u{07} é")
        #expect(Self.text(writer.bytes) == #""quote \" backslash \\ newline \n tab \t bell \u0007 é""#)
    }

    @Test func sameCommandsGiveSameBytes() throws {
        func run() throws -> [[UInt8]] {
            var s = Scenario()
            try s.users("a", "b", "c")
            try s.channel(members: ["a", "b", "c"])
            try s.connect("a1", as: "a")
            try s.connect("b1", as: "b")
            var out: [[UInt8]] = []
            for outcome in try [s.send("a", "m1"), s.send("c", "m2"), s.run(.markRead(cid: Scenario.general, userID: "b", messageID: nil))] {
                for event in outcome.events {
                    let encoded = StreamJSON.encode(event)
                    out += event.recipients.map { encoded.json(for: $0.counts) + Array($0.connectionID.utf8) }
                }
            }
            return out
        }
        #expect(try run() == run())
    }
}

@Suite("Timestamps")
struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000Z"),
        (Int64(1_763_000_000_123_456), "2025-11-13T02:13:20.123456Z"),
        (Int64(951_782_400_000_001), "2000-02-29T00:00:00.000001Z"),
        (Int64(-1), "1969-12-31T23:59:59.999999Z"),
    ])
    func formatsAndParsesRFC3339(micros: Int64, text: String) {
        #expect(Timestamp(rawValue: micros).rfc3339 == text)
        #expect(Timestamp(rfc3339: text) == Timestamp(rawValue: micros))
    }

    @Test(arguments: [
        (Int64(253_402_300_799_999_999), "9999-12-31T23:59:59.999999Z"),
        (Int64(-62_167_219_200_000_000), "0000-01-01T00:00:00.000000Z"),
        (Int64(-30_610_224_000_000_000), "1000-01-01T00:00:00.000000Z"),
        (Int64(-30_610_224_000_000_001), "0999-12-31T23:59:59.999999Z"),
        (Int64(253_402_300_800_000_000), "10000-01-01T00:00:00.000000Z"),
    ])
    func formatsEveryYearAsBeforeAndAppendsTheSameBytes(micros: Int64, text: String) {
        let time = Timestamp(rawValue: micros)
        #expect(time.rfc3339 == text)
        var bytes: [UInt8] = Array("x".utf8)
        time.appendRFC3339(to: &bytes)
        #expect(bytes == Array(("x" + text).utf8))
    }

    @Test func aTimestampFieldIsWrittenAsAQuotedRFC3339String() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("a", 1)
        writer.field("at", Timestamp(rawValue: 0))
        writer.field("b", true)
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":1,"at":"1970-01-01T00:00:00.000000Z","b":true}"#)
    }

    @Test func parsesOffsetsAndNanoseconds() {
        #expect(Timestamp(rfc3339: "2024-02-09T12:23:46.361362996Z")?.rfc3339 == "2024-02-09T12:23:46.361362Z")
        #expect(Timestamp(rfc3339: "2024-02-09T14:23:46+02:00")?.rfc3339 == "2024-02-09T12:23:46.000000Z")
        #expect(Timestamp(rfc3339: "yesterday") == nil)
        #expect(Timestamp(rfc3339: "2024-13-09T12:23:46Z") == nil)
    }
}

@Suite("JSON writer: strings")
struct JSONWriterStringTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("", #""""#),
        ("\"quoted\"", #""\"quoted\"""#),
        ("a\\b\nc\rd\te", #""a\\b\nc\rd\te""#),
        ("\u{01}start and end\u{1f}", #""\u0001start and end\u001f""#),
        ("héllo ✓✓ 👋", #""héllo ✓✓ 👋""#),
    ])
    func escapesOnlyWhatJSONRequires(text: String, json: String) {
        var writer = JSONWriter()
        writer.string(text)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == json)
    }
}
