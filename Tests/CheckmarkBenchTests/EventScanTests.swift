@testable import CheckmarkBench
import Testing

/// Reading events from their bytes without parsing JSON: the kind from the leading `type`, fields by key.
@Suite("Event scanning")
struct EventScanTests {
    static func scan<T>(_ text: String, _ body: (EventScan) -> T) -> T {
        Array(text.utf8).withUnsafeBytes { body(EventScan($0)) }
    }

    @Test(arguments: [
        (#"{"type":"message.new","cid":"messaging:a"}"#, EventScan.Kind.messageNew),
        (#"{"type":"message.read","cid":"messaging:a"}"#, .messageRead),
        (#"{"type":"message.delivered","cid":"messaging:a"}"#, .messageDelivered),
        (#"{"type":"reply","request_id":"w0"}"#, .reply),
        (#"{"type":"error","request_id":"w0"}"#, .error),
        (#"{"type":"health.check","connection_id":"x"}"#, .healthCheck),
        (#"{"type":"message.newer"}"#, .other),
        (#"{"type":"notification.mark_read"}"#, .other),
        (#"{"cid":"x","type":"message.new"}"#, .other),
        ("", .other),
    ])
    func kindComesFromTheLeadingType(text: String, kind: EventScan.Kind) {
        #expect(Self.scan(text) { $0.kind } == kind)
    }

    @Test func fieldsAreFoundByTheirWholeKey() {
        let read = #"{"type":"message.read","cid":"messaging:a","user":{"id":"u7","name":"x"},"last_read_message_id":"m3s1t99"}"#
        Self.scan(read) { event in
            #expect(event.messageID == nil, "last_read_message_id is not message_id")
            #expect(event.lastReadMessageID.map { String(decoding: $0, as: UTF8.self) } == "m3s1t99")
            #expect(event.userID.map { String(decoding: $0, as: UTF8.self) } == "u7")
            #expect(event.cid.map { String(decoding: $0, as: UTF8.self) } == "messaging:a")
            #expect(event.requestID == nil)
        }
        Self.scan(#"{"type":"message.new","message_id":"unterminated"#) { #expect($0.messageID == nil) }
    }

    @Test func harnessIDsCarryAuthorAndScheduledTime() {
        let id = HarnessIDs.message(author: 42, sequence: 7, scheduledNanoseconds: 123_456_789_000)
        #expect(id == "m42s7t123456789")
        Array(id.utf8).withUnsafeBytes { bytes in
            #expect(HarnessIDs.author(ofMessage: bytes) == 42)
            #expect(HarnessIDs.scheduledNanoseconds(ofMessage: bytes) == 123_456_789_000)
        }
        Array(HarnessIDs.user(1234).utf8).withUnsafeBytes { #expect(HarnessIDs.userIndex($0) == 1234) }
        Array("nobody".utf8).withUnsafeBytes { #expect(HarnessIDs.userIndex($0) == nil) }
    }
}
