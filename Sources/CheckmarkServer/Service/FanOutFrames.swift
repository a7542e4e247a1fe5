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

    /// One recipient on a loop: its sink, its counts (for events that carry them) and the window size
    /// of the shared compressed frames it takes (0: plain frames).
    typealias Target = (sink: any EventSink, counts: UnreadCounts?, windowBits: UInt8)

    /// Sends `event` to every target; called on the targets' event loop. Returns how many frames were
    /// queued to connections (the caller counts them once, not per frame).
    static func deliver(_ event: SharedEvent, to targets: [Target], compression: PerMessageDeflateConfiguration) -> Int {
        let encoder = encoder(for: compression)
        var windows: Set<Int> = []
        var lastWindow: UInt8 = 0
        for target in targets where target.windowBits != 0 && target.windowBits != lastWindow {
            lastWindow = target.windowBits
            windows.insert(Int(lastWindow))
        }
        // Recipients in a row often share their counts (and events without counts always do): the
        // current frames are reused without hashing, the rest are found in `cache`.
        var cache: [UnreadCounts?: SharedFrameEncoder.Frames] = [:]
        var currentKey: UnreadCounts?? = .none
        var plain = ByteBuffer()
        var compressed: [Int: ByteBuffer] = [:]
        var queued = 0
        for target in targets {
            let key = event.encoded.carriesCounts ? target.counts : nil
            if currentKey != .some(key) {
                let frames: SharedFrameEncoder.Frames
                if let cached = cache[key] {
                    frames = cached
                } else {
                    frames = encode(event, counts: key, windows: windows, with: encoder)
                    cache[key] = frames
                }
                currentKey = key
                (plain, compressed) = (frames.plain, frames.compressed)
            }
            let frame = target.windowBits == 0 ? plain : compressed[Int(target.windowBits)] ?? plain
            if target.sink.deliver(frame: frame, type: event.type, cid: event.cid, channelSeq: event.channelSeq) { queued += 1 }
        }
        return queued
    }

    /// The frames of `event` with the suffix of `counts`: plain, and compressed at each of `windows`.
    private static func encode(_ event: SharedEvent, counts: UnreadCounts?, windows: Set<Int>, with encoder: SharedFrameEncoder) -> SharedFrameEncoder.Frames {
        var payload = ByteBuffer()
        payload.reserveCapacity(event.encoded.prefix.count + EncodedEvent.maxSuffixSize)
        payload.writeBytes(event.encoded.prefix)
        var suffix: [UInt8] = []
        event.encoded.appendSuffix(for: counts, to: &suffix)
        payload.writeBytes(suffix)
        return encoder.encode(payload, windowBits: windows)
    }
}
