import CheckmarkCore
import CheckmarkWire
import NIOCore
import Testing

@Suite("Gateway envelopes: bytes on the wire")
struct GatewayEnvelopeTests {
    static let at = Timestamp(microseconds: 0)
    static let room = ChannelCID(type: "messaging", id: "room")
    static let created = at.rfc3339

    @Test func aReplyWrapsItsResultWithTheRequestID() {
        #expect(String(buffer: GatewayEnvelope.reply(result: Array(#"{"a":1}"#.utf8), requestID: "r1")) == #"{"type":"reply","request_id":"r1","result":{"a":1}}"#)
        #expect(String(buffer: GatewayEnvelope.reply(result: Array("{}".utf8), requestID: nil)) == #"{"type":"reply","result":{}}"#)
    }

    @Test func anErrorCarriesStreamsErrorObject() {
        let error = WireError.rateLimited("slow down")
        let bytes = GatewayEnvelope.error(error, requestID: "r2")
        #expect(String(buffer: bytes)
            == #"{"type":"error","request_id":"r2","error":{"code":9,"message":"slow down","StatusCode":429,"duration":"0.00ms","error_code":"rate_limited"}}"#)
    }

    @Test func aHealthCheckNamesTheConnection() {
        #expect(String(buffer: GatewayEnvelope.healthCheck(connectionID: "c1", createdAt: Self.at, me: nil))
            == #"{"type":"health.check","connection_id":"c1","cid":"*","created_at":"\#(Self.created)","custom":{}}"#)
    }

    @Test func resumeMarkersSayWhatTheResumeCovered() {
        #expect(String(buffer: GatewayEnvelope.resumeMarker(cid: Self.room, after: 2, head: 5, createdAt: Self.at, result: .replayed(3)))
            == #"{"type":"channel.resumed","cid":"messaging:room","channel_id":"room","channel_type":"messaging","created_at":"\#(Self.created)","last_seq":2,"channel_seq":5,"replayed":3}"#)
        #expect(String(buffer: GatewayEnvelope.resumeMarker(cid: Self.room, after: 2, head: 5, createdAt: Self.at, result: .failed(reason: "gone")))
            == #"{"type":"channel.resume_failed","cid":"messaging:room","channel_id":"room","channel_type":"messaging","created_at":"\#(Self.created)","last_seq":2,"channel_seq":5,"reason":"gone"}"#)
    }

    @Test func aReplayedEventIsCompletedWithTheRecipientsCounts() {
        let stored = Array(#"{"type":"message.new","cid":"messaging:room"}"#.utf8)
        let live = EncodedEvent(stored: stored, type: "message.new").json(for: UnreadCounts(totalUnread: 2, unreadChannels: 1, unreadThreads: 0))
        let replayed = GatewayEnvelope.replayedEvent(stored: stored, type: "message.new", counts: UnreadCounts(totalUnread: 2, unreadChannels: 1, unreadThreads: 0))
        #expect(Array(replayed.readableBytesView) == live)
    }
}
