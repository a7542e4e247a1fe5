import CheckmarkCore
import CheckmarkWebSocket
import NIOConcurrencyHelpers
import NIOCore

/// Stands in for one recorded connection during a replay: keeps the JSON of every event frame the
/// service delivers to it, in order.
final class ReplaySink: EventSink, @unchecked Sendable {
    let eventLoop: any EventLoop
    let connectionID: String
    var sharedCompressionWindowBits: Int? { nil }
    private let received = NIOLockedValueBox<[[UInt8]]>([])

    init(connectionID: String, eventLoop: any EventLoop) {
        self.connectionID = connectionID
        self.eventLoop = eventLoop
    }

    /// The events received so far.
    var events: [[UInt8]] { received.withLockedValue { $0 } }

    func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) -> Bool {
        // Read as the client would: the project's own frame parser, client role (server frames are unmasked).
        var parser = FrameParser(role: .client)
        parser.append(frame)
        guard let parsed = try? parser.nextFrame() else { return false }
        received.withLockedValue { $0.append(Array(parsed.payload.readableBytesView)) }
        return true
    }
}
