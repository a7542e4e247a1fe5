import CheckmarkCore
import NIOCore

/// The event frames a gateway connection holds back instead of writing them at once: those fanned
/// out before its first `health.check` (which must come first), and, per channel being resumed, the
/// live events that must wait until the missed ones are replayed. Pure.
struct ResumeBuffer {
    /// A held event frame and, for channel events, its `channel_seq`.
    struct Held {
        var frame: ByteBuffer
        var channelSeq: Int64?
    }

    /// What a finished resume sends, in order.
    enum Output: Equatable {
        /// The replayed event at this index of the replayed events.
        case replayed(Int)
        /// A held live frame.
        case held(ByteBuffer)
        /// The `channel.resumed` marker.
        case marker
    }

    private var resuming: [ChannelCID: [Held]] = [:]
    private var beforeHealthCheck: [ByteBuffer] = []

    /// Whether `cid`'s live events are held for a resume.
    func isResuming(_ cid: ChannelCID) -> Bool { resuming[cid] != nil }

    /// Starts holding `cid`'s live events; false when they are held already (a resume is under way).
    @discardableResult
    mutating func beginResume(_ cid: ChannelCID) -> Bool {
        guard resuming[cid] == nil else { return false }
        resuming[cid] = []
        return true
    }

    /// Holds an event when its channel is being resumed, or when `beforeFirstHealthCheck`; false when
    /// it may be written now.
    mutating func hold(_ frame: ByteBuffer, cid: ChannelCID?, channelSeq: Int64?, beforeFirstHealthCheck: Bool) -> Bool {
        if !resuming.isEmpty, let cid, resuming[cid] != nil {
            resuming[cid]!.append(Held(frame: frame, channelSeq: channelSeq))
            return true
        }
        guard beforeFirstHealthCheck else { return false }
        beforeHealthCheck.append(frame)
        return true
    }

    /// The frames held until the first `health.check`, to be written right after it.
    mutating func takeBeforeHealthCheck() -> [ByteBuffer] {
        defer { beforeHealthCheck = [] }
        return beforeHealthCheck
    }

    /// Ends a resume that replayed nothing (it failed): the held live events, in arrival order.
    mutating func release(_ cid: ChannelCID) -> [ByteBuffer] {
        (resuming.removeValue(forKey: cid) ?? []).map(\.frame)
    }

    /// Ends a resume that replayed events with these `channel_seq`s (in channel order, the live events
    /// starting after `head`): the replayed events merged in channel order with the held events at or
    /// before `head` that the replay lacks (the user's own notifications, which reached the connection
    /// live), then the marker, then the held events after `head`. No event is sent twice, and none of
    /// the held ones is dropped.
    mutating func finish(_ cid: ChannelCID, replayedSeqs: [Int64?], head: Int64) -> [Output] {
        let held = resuming.removeValue(forKey: cid) ?? []
        // A connection that watched already got the watchers' events live: never twice.
        let replayed = Set(replayedSeqs.compactMap { $0 })
        var early = held.filter { ($0.channelSeq ?? .max) <= head && !replayed.contains($0.channelSeq ?? -1) }[...]
        var out: [Output] = []
        out.reserveCapacity(replayedSeqs.count + held.count + 1)
        for (index, seq) in replayedSeqs.enumerated() {
            while let next = early.first, let nextSeq = next.channelSeq, nextSeq < seq ?? .max {
                out.append(.held(next.frame))
                early.removeFirst()
            }
            out.append(.replayed(index))
        }
        for next in early { out.append(.held(next.frame)) }
        out.append(.marker)
        for next in held where (next.channelSeq ?? .max) > head { out.append(.held(next.frame)) }
        return out
    }
}
