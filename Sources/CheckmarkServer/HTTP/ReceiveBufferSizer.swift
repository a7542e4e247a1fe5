import NIOCore

/// How many bytes a connection's next read asks for: ``HTTPLimits/initialReceiveBufferBytes`` at
/// first, twice the last size after a read that filled the buffer (up to ``maximum``), half of it
/// after two reads in a row that used at most half (down to ``minimum``). Sizes are powers of two.
///
/// The same rule as NIO's `AdaptiveRecvByteBufferAllocator`, in 4 bytes instead of 33: NIO holds a
/// channel's allocator as an existential, which stores up to 24 bytes inline and boxes anything
/// larger, so NIO's own allocator cost a 49-byte heap box per connection.
struct ReceiveBufferSizer: RecvByteBufferAllocator {
    private let minimumShift: UInt8
    private let maximumShift: UInt8
    private var shift: UInt8
    /// The last read used at most half of the buffer.
    private var shrinkNext = false

    var minimum: Int { 1 << Int(minimumShift) }
    var maximum: Int { 1 << Int(maximumShift) }
    var nextSize: Int { 1 << Int(shift) }

    /// Sizes are rounded: `minimum` and `initial` down and `maximum` up to a power of two. Traps
    /// unless 1 <= `minimum` <= `initial` <= `maximum` <= 1 GiB (the listener passes constants).
    init(minimum: Int, initial: Int, maximum: Int) {
        precondition(0 < minimum && minimum <= initial && initial <= maximum && maximum <= 1 << 30,
                     "receive buffer sizes: 0 < minimum \(minimum) <= initial \(initial) <= maximum \(maximum) <= 1 GiB")
        minimumShift = UInt8(Int.bitWidth - 1 - minimum.leadingZeroBitCount)
        shift = UInt8(Int.bitWidth - 1 - initial.leadingZeroBitCount)
        maximumShift = UInt8(Int.bitWidth - (maximum - 1).leadingZeroBitCount)
    }

    func buffer(allocator: ByteBufferAllocator) -> ByteBuffer {
        allocator.buffer(capacity: nextSize)
    }

    func nextBufferSize() -> Int? { nextSize }

    /// Adjusts the next size to a read of `actualReadBytes`; true when it grew.
    mutating func record(actualReadBytes: Int) -> Bool {
        if actualReadBytes >= nextSize, shift < maximumShift {
            shift += 1
            shrinkNext = false
            return true
        }
        if actualReadBytes <= nextSize / 2, shift > minimumShift {
            if shrinkNext { shift -= 1 }
            shrinkNext.toggle()
            return false
        }
        shrinkNext = false
        return false
    }
}
