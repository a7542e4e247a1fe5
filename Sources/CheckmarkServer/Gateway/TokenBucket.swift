import NIOCore

/// A token bucket: `rate` tokens a second, at most `burst` saved up. Pure; time is passed in.
struct TokenBucket {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var last: NIODeadline

    init(rate: Int, burst: Int, now: NIODeadline) {
        self.rate = Double(rate)
        self.burst = Double(max(burst, 1))
        tokens = Double(max(burst, 1))
        last = now
    }

    /// Whether the bucket would be full now (its owner has been idle long enough to be forgotten).
    func isFull(now: NIODeadline) -> Bool {
        tokens + Double((now - last).nanoseconds) / 1e9 * rate >= burst
    }

    /// Takes one token; false when none is left.
    mutating func take(now: NIODeadline) -> Bool {
        let elapsed = Double((now - last).nanoseconds) / 1e9
        last = now
        tokens = min(burst, tokens + elapsed * rate)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
