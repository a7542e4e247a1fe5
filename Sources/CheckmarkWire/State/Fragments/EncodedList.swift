import CheckmarkCore

/// A JSON array kept encoded together with the entries it was encoded from. Updating it to a new
/// list of entries encodes only the entries that changed (compared by value, found by key wherever
/// they moved); what it writes is always exactly what encoding every entry afresh would write.
package struct EncodedList<Entry: EncodedListEntry>: Sendable {
    package init() {}

    /// The entries the array was last encoded from, in order.
    package private(set) var entries: [Entry] = []
    /// The whole array, brackets included.
    package private(set) var bytes: [UInt8] = Array("[]".utf8)
    /// Where each entry lies in ``bytes`` (no comma); nil for an entry that takes no place.
    package private(set) var ranges: [Range<Int>?] = []

    /// Bytes held, roughly: the encoding and the entries' inline storage. The entries' text is not
    /// counted: it is shared with the engine's state while that is current, and the encoding holds
    /// at least as many bytes.
    package var footprint: Int {
        bytes.capacity + entries.capacity * MemoryLayout<Entry>.stride + ranges.capacity * MemoryLayout<Range<Int>?>.stride
    }

    /// Makes the array the encoding of `newEntries`.
    package mutating func update(to newEntries: [Entry]) {
        if newEntries == entries { return }
        var writer = JSONWriter(capacity: bytes.count + 1024)
        var newRanges: [Range<Int>?] = []
        newRanges.reserveCapacity(newEntries.count)
        var positions: [String: Int]?
        writer.beginArray()
        for (index, entry) in newEntries.enumerated() {
            let old: Int?
            if index < entries.count, entries[index].key == entry.key {
                old = index
            } else {
                if positions == nil {
                    positions = Dictionary(entries.indices.map { (entries[$0].key, $0) }, uniquingKeysWith: { first, _ in first })
                }
                old = positions?[entry.key]
            }
            let start = writer.count
            if let old, entries[old] == entry {
                if let range = ranges[old] { writer.raw(bytes[range]) }
            } else {
                entry.encode(into: &writer)
            }
            newRanges.append(Self.entryRange(in: writer, from: start))
        }
        writer.endArray()
        entries = newEntries
        bytes = writer.bytes
        ranges = newRanges
    }

    /// What an entry wrote from `start` on, without its leading comma; nil when it wrote nothing.
    private static func entryRange(in writer: JSONWriter, from start: Int) -> Range<Int>? {
        let end = writer.count
        guard end > start else { return nil }
        return (writer.bytes[start] == UInt8(ascii: ",") ? start + 1 : start)..<end
    }

    /// Writes the entries at `positions` (consecutive, in order) as elements of the array `writer` is
    /// in: one copy of the bytes that hold them.
    package func writeElements(_ positions: Range<Int>, into writer: inout JSONWriter) {
        guard let first = positions.first(where: { ranges[$0] != nil }).flatMap({ ranges[$0] }),
              let last = positions.last(where: { ranges[$0] != nil }).flatMap({ ranges[$0] }) else { return }
        writer.raw(bytes[first.lowerBound..<last.upperBound])
    }
}
