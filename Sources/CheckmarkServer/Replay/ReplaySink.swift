import CheckmarkCore
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

    func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) {
        // An unmasked server frame: 2 header bytes, plus 2 or 8 for longer payloads.
        let bytes = Array(frame.readableBytesView)
        guard bytes.count >= 2 else { return }
        let length = bytes[1] & 0x7F
        let header = length == 126 ? 4 : length == 127 ? 10 : 2
        guard bytes.count >= header else { return }
        received.withLockedValue { $0.append(Array(bytes[header...])) }
    }
}
