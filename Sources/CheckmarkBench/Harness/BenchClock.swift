import NIOCore

/// The harness's one clock: monotonic nanoseconds, the same on every thread of the process. Every
/// latency is a difference of two readings of it (send times travel inside message ids).
package enum BenchClock {
    @inline(__always)
    package static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }
}
