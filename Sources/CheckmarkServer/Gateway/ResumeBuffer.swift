import CheckmarkCore
import NIOCore

/// The event frames a gateway connection holds back instead of writing them at once: those fanned
/// out before its first `health.check` (which must come first), and, per channel being resumed, the
/// live events that must wait until the missed ones are replayed, page by page. Pure.
struct ResumeBuffer {
    /// A held event frame and, for channel events, its `channel_seq`.
    struct Held {
        var frame: ByteBuffer
        var channelSeq: Int64?
    }

    /// What a page of a replay sends, in order.
    enum Output: Equatable {
        /// The replayed event at this index of the page's events.
        case replayed(Int)
        /// A held live frame.
        case held(ByteBuffer)
    }

    /// What is held, on the heap and only while something is: every connection keeps a buffer, and
    /// most hold nothing (``ConnectionObjectFootprintTests`` hold the session's size). Copied on write.
    private final class Storage {
        var resuming: [ChannelCID: [Held]] = [:]
        var beforeHealthCheck: [ByteBuffer] = []
        var heldBytes = 0

        func copy() -> Storage {
            let copy = Storage()
            copy.resuming = resuming
            copy.beforeHealthCheck = beforeHealthCheck
            copy.heldBytes = heldBytes
            return copy
        }
    }

    private var storage: Storage?

    /// The bytes of every frame held (the outbound limit counts them: ``GatewaySession``).
    var heldBytes: Int { storage?.heldBytes ?? 0 }

    /// The storage, unique to this buffer, made when there is none.
    private mutating func unique() -> Storage {
        if isKnownUniquelyReferenced(&storage), let storage { return storage }
        let unique = storage?.copy() ?? Storage()
        storage = unique
        return unique
    }

    /// Gives the storage back once nothing is held nor resuming.
    private mutating func releaseIfEmpty() {
        if let storage, storage.resuming.isEmpty, storage.beforeHealthCheck.isEmpty { self.storage = nil }
    }

    /// Whether `cid`'s live events are held for a resume.
    func isResuming(_ cid: ChannelCID) -> Bool { storage?.resuming[cid] != nil }

    /// Starts holding `cid`'s live events; false when they are held already (a resume is under way).
    @discardableResult
    mutating func beginResume(_ cid: ChannelCID) -> Bool {
        guard !isResuming(cid) else { return false }
        unique().resuming[cid] = []
        return true
    }

    /// Holds an event when its channel is being resumed, or when `beforeFirstHealthCheck`; false when
    /// it may be written now.
    mutating func hold(_ frame: ByteBuffer, cid: ChannelCID?, channelSeq: Int64?, beforeFirstHealthCheck: Bool) -> Bool {
        if storage != nil, let cid, isResuming(cid) {
            let storage = unique()
            storage.resuming[cid]!.append(Held(frame: frame, channelSeq: channelSeq))
            storage.heldBytes += frame.readableBytes
            return true
        }
        guard beforeFirstHealthCheck else { return false }
        let storage = unique()
        storage.beforeHealthCheck.append(frame)
        storage.heldBytes += frame.readableBytes
        return true
    }

    /// The frames held until the first `health.check`, to be written right after it.
    mutating func takeBeforeHealthCheck() -> [ByteBuffer] {
        guard storage != nil else { return [] }
        let storage = unique()
        defer {
            storage.beforeHealthCheck = []
            releaseIfEmpty()
        }
        storage.heldBytes -= Self.bytes(storage.beforeHealthCheck)
        return storage.beforeHealthCheck
    }

    /// Ends a resume that failed: the held live events not sent yet, in arrival order.
    mutating func release(_ cid: ChannelCID) -> [ByteBuffer] {
        takeHeld(cid).map(\.frame)
    }

    /// One page of a resume's replay, whose events have these `channel_seq`s (in channel order) and
    /// whose journal rows covered the channel up to `through`: the replayed events merged in channel
    /// order with the held events at or before `through` that the replay lacks (the user's own
    /// notifications, which reached the connection live). Held events the page replays are dropped
    /// (never sent twice); those after `through` stay held.
    mutating func page(_ cid: ChannelCID, replayedSeqs: [Int64?], through: Int64) -> [Output] {
        guard isResuming(cid) else { return replayedSeqs.indices.map { .replayed($0) } }
        let storage = unique()
        let held = storage.resuming[cid] ?? []
        // A connection that watched already got the watchers' events live: never twice.
        let replayed = Set(replayedSeqs.compactMap { $0 })
        var early = held.filter { ($0.channelSeq ?? .max) <= through && !replayed.contains($0.channelSeq ?? -1) }[...]
        let kept = held.filter { ($0.channelSeq ?? .max) > through }
        storage.heldBytes -= Self.bytes(held.map(\.frame)) - Self.bytes(kept.map(\.frame))
        storage.resuming[cid] = kept
        var out: [Output] = []
        out.reserveCapacity(replayedSeqs.count + early.count)
        for (index, seq) in replayedSeqs.enumerated() {
            while let next = early.first, let nextSeq = next.channelSeq, nextSeq < seq ?? .max {
                out.append(.held(next.frame))
                early.removeFirst()
            }
            out.append(.replayed(index))
        }
        for next in early { out.append(.held(next.frame)) }
        return out
    }

    /// Ends a resume whose pages covered the channel up to `head`: the held events to send before the
    /// marker (those at or before `head` still held: none, when the pages covered them) and after it,
    /// each in arrival order. No held event is dropped.
    mutating func finish(_ cid: ChannelCID, head: Int64) -> (beforeMarker: [ByteBuffer], afterMarker: [ByteBuffer]) {
        let held = takeHeld(cid)
        return (held.filter { ($0.channelSeq ?? .max) <= head }.map(\.frame), held.filter { ($0.channelSeq ?? .max) > head }.map(\.frame))
    }

    /// Stops holding `cid`'s events: those held, in arrival order.
    private mutating func takeHeld(_ cid: ChannelCID) -> [Held] {
        guard isResuming(cid) else { return [] }
        let storage = unique()
        let held = storage.resuming.removeValue(forKey: cid) ?? []
        storage.heldBytes -= Self.bytes(held.map(\.frame))
        releaseIfEmpty()
        return held
    }

    private static func bytes(_ frames: [ByteBuffer]) -> Int {
        frames.reduce(0) { $0 + $1.readableBytes }
    }
}
