import NIOConcurrencyHelpers
import NIOCore

/// Each user token's REST request rate: `rate` requests a second on average, `burst` at once; past
/// it, 429 (`rate_limited`, Stream code 9). Server tokens are the app's backend and are not limited.
/// Shared by every event loop; holds at most ``maxTrackedCallers`` buckets (idle ones are dropped first).
final class RESTRateLimiter: Sendable {
    let rate: Int
    let burst: Int
    /// Callers tracked at once; past it, buckets that have refilled (idle callers) are forgotten.
    static let maxTrackedCallers = 100_000
    private let buckets = NIOLockedValueBox([String: TokenBucket]())

    init(rate: Int, burst: Int) {
        self.rate = rate
        self.burst = burst
    }

    /// Whether `caller` may make one more request now.
    func admit(_ caller: RESTCaller, now: NIODeadline = .now()) -> Bool {
        guard case .user(let user) = caller else { return true }
        return admit(key: user, now: now)
    }

    /// Whether the bucket `key` (a user, a connection) may take one more request now.
    func admit(key: String, now: NIODeadline = .now()) -> Bool {
        buckets.withLockedValue { buckets in
            if buckets[key] == nil, buckets.count >= Self.maxTrackedCallers {
                buckets = buckets.filter { !$0.value.isFull(now: now) }
            }
            return buckets[key, default: TokenBucket(rate: rate, burst: burst, now: now)].take(now: now)
        }
    }
}
