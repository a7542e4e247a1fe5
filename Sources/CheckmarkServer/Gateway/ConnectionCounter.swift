import NIOConcurrencyHelpers

/// Counts the gateway's open connections, to enforce ``GatewayLimits/maxConnections``. The limit per
/// user is the engine's (`connect` is refused past it): it knows each user's connections already.
final class ConnectionCounter: Sendable {
    private let open = NIOLockedValueBox(0)
    let limits: GatewayLimits

    init(limits: GatewayLimits) { self.limits = limits }

    /// Takes a slot; nil when one is free, else the reason it is not.
    func acquire() -> String? {
        open.withLockedValue { open in
            if open >= limits.maxConnections {
                return "the server has \(limits.maxConnections) connections, its limit"
            }
            open += 1
            return nil
        }
    }

    func release() {
        open.withLockedValue { $0 -= 1 }
    }

    var total: Int { open.withLockedValue { $0 } }
}
