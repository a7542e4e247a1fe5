import CheckmarkCore
import CheckmarkStorage
#if canImport(Glibc)
import Glibc
#endif

/// Which stored channel object (``JournaledChannel``) a journaled event refers to: per channel, the
/// latest object its events carried, so that an event with the same bytes refers to it instead of
/// storing them again.
///
/// Keys never go back within a channel: an event gets the latest object's key, or its own
/// `channel_seq` (its batch stores the object), which is past every earlier key; a channel another
/// node wrote to since is forgotten (``forget(_:)``). Retention relies on that (``JournaledChannel``).
/// Holds at most ``capacity`` channels, each object of at most ``maxObjectBytes`` (each event that
/// carries a larger one stores it under its own key); a channel that comes when it is full empties it
/// first: at most 64 MiB of objects (typically 1.3 KB a channel).
struct ChannelObjectLedger {
    /// Most channels kept: more than a node's channels read at once.
    static let capacity = 16_384
    /// Largest object kept, in bytes.
    static let maxObjectBytes = 4096

    private var latest: [ChannelCID: (since: Int64, object: [UInt8])] = [:]

    /// The key of `object`, carried by the event at `channelSeq` of `cid`: the channel's latest key when
    /// that object has the same bytes, else `channelSeq` (the event's batch stores the object).
    mutating func key(for object: ArraySlice<UInt8>, of cid: ChannelCID, at channelSeq: Int64) -> Int64 {
        if let kept = latest[cid], Self.same(kept.object, object) { return kept.since }
        guard object.count <= Self.maxObjectBytes else {
            latest[cid] = nil
            return channelSeq
        }
        if latest.count >= Self.capacity, latest[cid] == nil { latest.removeAll(keepingCapacity: true) }
        latest[cid] = (channelSeq, Array(object))
        return channelSeq
    }

    /// Forgets what it holds of `cids`, whose events another node journaled: their keys are not known
    /// here (other nodes' entries are read without their events), so the next event of such a
    /// channel on this node takes its own sequence as key, past every key before it.
    mutating func forget(_ cids: some Sequence<ChannelCID>) {
        for cid in cids { latest[cid] = nil }
    }

    /// Whether the two have the same bytes (compared as memory: a byte-wise loop cost more than the
    /// rest of journaling an event).
    private static func same(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    /// How many channels it holds.
    var keptChannels: Int { latest.count }
}
