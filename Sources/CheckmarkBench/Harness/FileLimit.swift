#if canImport(Glibc)
import Glibc
#endif

/// The open-file limit, which bounds how many connections one process can hold (the harness and a
/// local server each need one descriptor per connection).
package enum FileLimit {
    /// Raises the soft limit to the hard one (inherited by a server started afterwards); returns it.
    @discardableResult
    package static func raiseToHard() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }
}
