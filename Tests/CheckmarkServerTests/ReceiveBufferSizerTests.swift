@testable import CheckmarkServer
import NIOCore
import Testing

/// The size of a connection's next read: grows while reads fill the buffer, shrinks after two
/// reads in a row that used at most half of it, and fits inline in NIO's allocator existential.
@Suite("Receive buffer sizes")
struct ReceiveBufferSizerTests {
    @Test func firstReadAsksForTheInitialSize() {
        let sizer = ReceiveBufferSizer(minimum: 64, initial: 256, maximum: 65536)
        #expect(sizer.nextBufferSize() == 256)
        #expect(sizer.buffer(allocator: ByteBufferAllocator()).capacity >= 256)
    }

    @Test func fullReadsDoubleTheSizeUpToTheMaximum() {
        var sizer = ReceiveBufferSizer(minimum: 64, initial: 256, maximum: 1024)
        let grewOnce = sizer.record(actualReadBytes: 256)
        #expect(grewOnce)
        #expect(sizer.nextBufferSize() == 512)
        let grewTwice = sizer.record(actualReadBytes: 512)
        #expect(grewTwice)
        #expect(sizer.nextBufferSize() == 1024)
        let grewPastMaximum = sizer.record(actualReadBytes: 1024)
        #expect(!grewPastMaximum, "no growth past the maximum")
        #expect(sizer.nextBufferSize() == 1024)
    }

    @Test func twoSmallReadsInARowHalveTheSizeDownToTheMinimum() {
        var sizer = ReceiveBufferSizer(minimum: 64, initial: 256, maximum: 65536)
        _ = sizer.record(actualReadBytes: 100)
        #expect(sizer.nextBufferSize() == 256, "one small read is not enough")
        _ = sizer.record(actualReadBytes: 100)
        #expect(sizer.nextBufferSize() == 128)
        _ = sizer.record(actualReadBytes: 10)
        _ = sizer.record(actualReadBytes: 100)
        #expect(sizer.nextBufferSize() == 128, "a read of more than half breaks the run")
        for _ in 0..<10 { _ = sizer.record(actualReadBytes: 1) }
        #expect(sizer.nextBufferSize() == 64)
    }

    @Test func sizesAreRoundedToPowersOfTwo() {
        let sizer = ReceiveBufferSizer(minimum: 100, initial: 300, maximum: 5000)
        #expect(sizer.minimum == 64)
        #expect(sizer.nextBufferSize() == 256)
        #expect(sizer.maximum == 8192)
    }

    /// The same sizes as NIO's allocator for the same reads, whatever their order.
    @Test func followsTheSameRuleAsNIOsAdaptiveAllocator() {
        var ours = ReceiveBufferSizer(minimum: 64, initial: 256, maximum: 65536)
        var nio = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 256, maximum: 65536)
        // A fixed pseudo-random sequence (Knuth's MMIX LCG), so that a failure replays.
        var state: UInt64 = 21
        func random() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for step in 0..<5_000 {
            let size = ours.nextBufferSize()!
            // Full reads, small reads, and reads in between, as a socket gives them.
            let read = switch random() % 4 {
            case 0: size
            case 1: Int(random() % UInt64(size / 2 + 1))
            default: Int(random() % UInt64(size + 1))
            }
            let grewOurs = ours.record(actualReadBytes: read)
            let grewNIO = nio.record(actualReadBytes: read)
            #expect(grewOurs == grewNIO, "step \(step)")
            #expect(ours.nextBufferSize() == nio.nextBufferSize(), "step \(step)")
            if ours.nextBufferSize() != nio.nextBufferSize() { return }
        }
    }

    /// Regression: NIO's `AdaptiveRecvByteBufferAllocator` (33 bytes) did not fit the existential's
    /// 24 inline bytes, so every connection held a 49-byte heap box for it.
    @Test func fitsInlineInAnExistential() {
        #expect(MemoryLayout<ReceiveBufferSizer>.size <= 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<AdaptiveRecvByteBufferAllocator>.size > 3 * MemoryLayout<Int>.size)
    }
}

