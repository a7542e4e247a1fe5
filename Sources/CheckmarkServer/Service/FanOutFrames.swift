import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire
import NIOCore
import NIOPosix

/// Builds the frames of one event for the recipients on one event loop: one payload per distinct
/// counts (the shared prefix plus that recipient's short suffix; the message is never re-encoded),
/// and one frame per payload, compressed once per window size where recipients share compression.
enum FanOutFrames {
    /// Per thread: one shared encoder per compression configuration (encoders are not thread-safe).
    private final class Encoders {
        var byConfiguration: [PerMessageDeflateConfiguration: SharedFrameEncoder] = [:]
    }

    nonisolated(unsafe) private static let encoders = ThreadSpecificVariable<Encoders>()

    private static func encoder(for configuration: PerMessageDeflateConfiguration) -> SharedFrameEncoder {
        let box: Encoders
        if let current = encoders.currentValue {
            box = current
        } else {
            box = Encoders()
            encoders.currentValue = box
        }
        if let encoder = box.byConfiguration[configuration] { return encoder }
        let encoder = SharedFrameEncoder(configuration: configuration)
        box.byConfiguration[configuration] = encoder
        return encoder
    }

    /// Sends `event` to every target; called on the targets' event loop. Returns how many frames were
    /// queued to connections (the caller counts them once, not per frame).
    static func deliver(_ event: SharedEvent, to targets: [(any EventSink, UnreadCounts?)], compression: PerMessageDeflateConfiguration) -> Int {
        let encoder = encoder(for: compression)
        var windows: Set<Int> = []
        for (sink, _) in targets {
            if let bits = sink.sharedCompressionWindowBits { windows.insert(bits) }
        }
        // Recipients in a row often share their counts (and events without counts always do): the
        // last frames are reused without hashing, the rest are found in `cache`.
        var cache: [UnreadCounts?: SharedFrameEncoder.Frames] = [:]
        var last: (key: UnreadCounts?, frames: SharedFrameEncoder.Frames)?
        var queued = 0
        for (sink, counts) in targets {
            let key = event.encoded.carriesCounts ? counts : nil
            let frames: SharedFrameEncoder.Frames
            if let last, last.key == key {
                frames = last.frames
            } else if let cached = cache[key] {
                frames = cached
                last = (key, cached)
            } else {
                var payload = ByteBuffer()
                payload.reserveCapacity(event.encoded.prefix.count + EncodedEvent.maxSuffixSize)
                payload.writeBytes(event.encoded.prefix)
                var suffix: [UInt8] = []
                event.encoded.appendSuffix(for: key, to: &suffix)
                payload.writeBytes(suffix)
                frames = encoder.encode(payload, windowBits: windows.isEmpty ? [] : windows)
                cache[key] = frames
                last = (key, frames)
            }
            let frame = sink.sharedCompressionWindowBits.flatMap { frames.compressed[$0] } ?? frames.plain
            if sink.deliver(frame: frame, type: event.type, cid: event.cid, channelSeq: event.channelSeq) { queued += 1 }
        }
        return queued
    }
}
