import NIOConcurrencyHelpers

/// Counts open gateway connections, in total and per user, to enforce ``GatewayLimits``.
final class ConnectionCounter: Sendable {
    /// Per user, its open connections (a 4-byte count: a user's connections are open descriptors).
    private let counts = NIOLockedValueBox((total: 0, perUser: [String: UInt32]()))
    let limits: GatewayLimits

    init(limits: GatewayLimits) { self.limits = limits }

    /// Takes a slot for `userID`; nil when one is free, else the reason it is not.
    func acquire(_ userID: String) -> String? {
        counts.withLockedValue { counts in
            if counts.total >= limits.maxConnections {
                return "the server has \(limits.maxConnections) connections, its limit"
            }
            let mine = counts.perUser[userID, default: 0]
            if Int(mine) >= limits.maxConnectionsPerUser {
                return "user \(userID) has \(limits.maxConnectionsPerUser) connections, the limit per user"
            }
            counts.total += 1
            counts.perUser[userID] = mine + 1
            return nil
        }
    }

    func release(_ userID: String) {
        counts.withLockedValue { counts in
            counts.total -= 1
            let left = counts.perUser[userID, default: 1] - 1
            counts.perUser[userID] = left > 0 ? left : nil
        }
    }

    var total: Int { counts.withLockedValue { $0.total } }
}
