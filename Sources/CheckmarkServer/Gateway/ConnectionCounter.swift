import CheckmarkCore
import NIOConcurrencyHelpers

/// Counts the gateway's open connections, to enforce ``GatewayLimits/maxConnections``, and each
/// user's connections admitted and not registered yet. The limit per user is the engine's (it holds
/// each user's open connections); a connection is admitted against it, counting the user's other
/// registrations in flight, before anything is done on its behalf.
final class ConnectionCounter: Sendable {
    private let open = NIOLockedValueBox(0)
    /// Per user, connections admitted whose registration has not ended: empty (and its storage freed)
    /// whenever no connection is registering.
    private let registering = NIOLockedValueBox([String: Int]())
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

    /// Admits a connection of `userID` to register, on the engine's loop: refused with
    /// `too_many_connections` when the user's open connections and those registering reach the
    /// engine's limit. An admitted registration is ended with ``endRegistration(of:)``, whatever its
    /// outcome.
    func admitRegistration(of userID: String, in engine: ReceiptsEngine) throws {
        try registering.withLockedValue { registering in
            try engine.checkConnectionLimit(of: userID, opening: registering[userID] ?? 0)
            registering[userID, default: 0] += 1
        }
    }

    func endRegistration(of userID: String) {
        registering.withLockedValue { registering in
            let left = (registering[userID] ?? 1) - 1
            registering[userID] = left > 0 ? left : nil
            if registering.isEmpty { registering = [:] }
        }
    }

    /// Connections registering now.
    var registrations: Int { registering.withLockedValue { $0.values.reduce(0, +) } }
}
