import CheckmarkCore
import NIOCore

/// The JSON text messages the gateway writes itself (everything but fanned-out events): a command's
/// `reply`, an `error`, `health.check`, and a resume's replayed events and closing marker. Each is
/// written in one pass with ``JSONWriter``; the bytes are what Stream's SDKs parse.
package enum GatewayEnvelope {
    /// `{"type":"reply","request_id":..,"result":<result>}`; `result` is JSON already encoded.
    package static func reply(result: [UInt8], requestID: String?) -> ByteBuffer {
        var w = JSONWriter(capacity: result.count + 64)
        w.beginObject()
        w.field("type", "reply")
        w.fieldIfPresent("request_id", requestID)
        w.key("result")
        w.raw(result)
        w.endObject()
        return buffer(w)
    }

    /// `{"type":"error","request_id":..,"error":{..}}` with the error's Stream object.
    package static func error(_ error: WireError, requestID: String?) -> ByteBuffer {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "error")
        w.fieldIfPresent("request_id", requestID)
        w.key("error")
        error.write(into: &w)
        w.endObject()
        return buffer(w)
    }

    /// `health.check` with `connection_id` and, when the user is known, `me` (the user with privacy
    /// settings and unread counts).
    package static func healthCheck(connectionID: String, createdAt: Timestamp, me: (user: User, counts: UnreadCounts)?) -> ByteBuffer {
        var w = JSONWriter()
        w.beginObject()
        w.field("type", "health.check")
        w.field("connection_id", connectionID)
        w.field("cid", "*")
        w.field("created_at", createdAt)
        w.key("custom")
        w.beginObject()
        w.endObject()
        if let me {
            w.key("me")
            StreamJSON.write(ownUser: me.user, counts: me.counts, into: &w)
        }
        w.endObject()
        return buffer(w)
    }

    /// How a resume ended, for its marker.
    package enum ResumeResult: Sendable, Hashable {
        /// The missed events (this many) are out; live ones follow.
        case replayed(Int)
        /// The client must re-read the channel's state.
        case failed(reason: String)
    }

    /// `channel.resumed` or `channel.resume_failed`, with the sequences the resume covers (`last_seq`
    /// the client saw, `channel_seq` where live events begin).
    package static func resumeMarker(cid: ChannelCID, after: Int64, head: Int64, createdAt: Timestamp, result: ResumeResult) -> ByteBuffer {
        var w = JSONWriter()
        w.beginObject()
        switch result {
        case .replayed: w.field("type", "channel.resumed")
        case .failed: w.field("type", "channel.resume_failed")
        }
        w.field("cid", cid)
        w.field("channel_id", cid.id)
        w.field("channel_type", cid.type)
        w.field("created_at", createdAt)
        w.field("last_seq", Int(after))
        w.field("channel_seq", Int(head))
        switch result {
        case .replayed(let count): w.field("replayed", count)
        case .failed(let reason): w.field("reason", reason)
        }
        w.endObject()
        return buffer(w)
    }

    /// A replayed event: its stored JSON completed with the recipient's counts, as it went out live.
    package static func replayedEvent(stored: [UInt8], type: String, counts: UnreadCounts) -> ByteBuffer {
        var out = ByteBuffer()
        let event = EncodedEvent(stored: stored, type: type)
        out.reserveCapacity(event.prefix.count + EncodedEvent.maxSuffixSize)
        out.writeBytes(event.prefix)
        out.writeBytes(event.suffix(for: counts))
        return out
    }

    private static func buffer(_ writer: JSONWriter) -> ByteBuffer {
        var out = ByteBuffer()
        out.writeBytes(writer.bytes)
        return out
    }
}
