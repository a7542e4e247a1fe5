import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Where a connection's events go: implemented by the gateway's connection, called on ``eventLoop``
/// with events in the order they were committed.
package protocol EventSink: AnyObject {
    /// The loop ``deliver(frame:type:cid:channelSeq:)`` is called on. Read once, on the engine's
    /// loop, when the connection opens on the service; it must be the same loop, retained by the
    /// sink, for as long as the sink is open (the fan-out groups recipients by its identity).
    var eventLoop: any EventLoop { get }
    /// The window size of shared compressed frames this connection takes, or nil for plain frames.
    /// Read once, on the engine's loop, when the connection opens on the service; it must not change
    /// afterwards.
    var sharedCompressionWindowBits: Int? { get }
    /// One committed event's complete WebSocket frame for this connection, with the event's type and,
    /// for channel events, its channel and `channel_seq`. True when a frame was queued to the
    /// connection now (false: held back for later, or dropped); the fan-out counts them per batch.
    func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) -> Bool
}

/// An event encoded once for all its recipients, with its journal sequences.
package struct SharedEvent: Sendable {
    package var type: String
    package var encoded: EncodedEvent
    package var cid: ChannelCID?
    /// The channel's event sequence (for channel events).
    package var channelSeq: Int64?

    package init(type: String, encoded: EncodedEvent, cid: ChannelCID?, channelSeq: Int64?) {
        self.type = type
        self.encoded = encoded
        self.cid = cid
        self.channelSeq = channelSeq
    }
}
