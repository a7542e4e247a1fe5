/// The ids of one channel's messages in position order, and the position of each id. The ids' UTF-8
/// bytes lie end to end in one buffer and an open-addressing table holds positions: about 30 bytes
/// a message for a 16-byte id, where a string and a dictionary entry each took about 140.
struct MessageIDs: Sendable {
    private var bytes: [UInt8] = []
    /// Where each id ends in ``bytes`` (it starts where the one before it ends).
    private var ends: [UInt32] = []
    /// Position plus one of the id hashed to each slot (or, on a collision, a later free one); 0 is
    /// empty. At most half the slots are used.
    private var slots: [UInt32] = []

    var count: Int { ends.count }

    mutating func reserveCapacity(_ count: Int, bytesPerID: Int = 16) {
        bytes.reserveCapacity(count * bytesPerID)
        ends.reserveCapacity(count)
        if slots.count < count * 2 { rehash(capacity: Self.slotCount(for: count)) }
    }

    /// The id at `position`.
    subscript(position: Int) -> String {
        String(decoding: bytes[start(of: position)..<end(of: position)], as: UTF8.self)
    }

    /// The position of `id`, if one of the ids.
    func position(of id: String) -> Int? {
        guard !slots.isEmpty else { return nil }
        var id = id
        return id.withUTF8 { wanted in
            let mask = slots.count - 1
            var slot = Self.hash(wanted) & mask
            while slots[slot] != 0 {
                let position = Int(slots[slot]) - 1
                if matches(wanted, at: position) { return position }
                slot = (slot + 1) & mask
            }
            return nil
        }
    }

    /// Appends `id` at the next position (ids are unique: the caller checked ``position(of:)``).
    mutating func append(_ id: String) {
        var id = id
        // A message id is at most 255 bytes: this is over 16 million messages in one channel's memory.
        precondition(ends.count < Int(UInt32.max) && bytes.count + id.utf8.count <= Int(UInt32.max),
                     "a channel holds at most 4 GiB of message ids")
        if (ends.count + 1) * 2 > slots.count { rehash(capacity: Self.slotCount(for: ends.count + 1)) }
        id.withUTF8 { bytes.append(contentsOf: $0) }
        ends.append(UInt32(bytes.count))
        insert(ends.count - 1)
    }

    private func start(of position: Int) -> Int { position == 0 ? 0 : Int(ends[position - 1]) }
    private func end(of position: Int) -> Int { Int(ends[position]) }

    private func matches(_ wanted: UnsafeBufferPointer<UInt8>, at position: Int) -> Bool {
        let (start, end) = (start(of: position), end(of: position))
        guard end - start == wanted.count else { return false }
        return bytes.withUnsafeBufferPointer { all in
            wanted.elementsEqual(UnsafeBufferPointer(rebasing: all[start..<end]))
        }
    }

    private mutating func insert(_ position: Int) {
        let mask = slots.count - 1
        var slot = bytes.withUnsafeBufferPointer { all in
            Self.hash(UnsafeBufferPointer(rebasing: all[start(of: position)..<end(of: position)]))
        } & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = UInt32(position + 1)
    }

    private mutating func rehash(capacity: Int) {
        slots = Array(repeating: 0, count: capacity)
        for position in ends.indices { insert(position) }
    }

    /// The smallest power of two at least twice `count` (and at least 16).
    private static func slotCount(for count: Int) -> Int {
        var slots = 16
        while slots < count * 2 { slots *= 2 }
        return slots
    }

    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return hasher.finalize()
    }
}
