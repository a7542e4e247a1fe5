#if canImport(Glibc)
import Glibc
#endif
import CheckmarkCore

/// Wall-clock time for the shells; the cores take time as an input.
package enum WallClock {
    package static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(rawValue: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000)
    }
}
