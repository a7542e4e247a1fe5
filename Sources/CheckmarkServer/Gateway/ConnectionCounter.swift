import CheckmarkCore
import NIOConcurrencyHelpers

/// Counts the gateway's open connections, to enforce ``GatewayLimits/maxConnections``, and each
/// user's connections admitted and not registered yet. The limit per user is the engine's (it holds
/// each user's open connections); a connection is admitted against it, counting the user's other
/// registrations in flight, before anything is done on its behalf.
final class ConnectionCounter: Sendable {
    private let open = NIOLockedValueBox(0)
    /// Per user, the ids of connections admitted whose registration has not ended: empty (and its
    /// storage freed) whenever no connection is registering.
    private let registering = NIOLockedValueBox([String: [String]]())
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

    /// Admits connection `connectionID` of `userID` to register, on the engine's loop: refused with
    /// `too_many_connections` when the user's open connections and those still registering reach the
    /// engine's limit. A registering connection the engine has already opened is counted once, as
    /// open. An admitted registration is ended with ``endRegistration(of:connectionID:)``, whatever
    /// its outcome.
    func admitRegistration(of userID: String, connectionID: String, in engine: ReceiptsEngine) throws {
        try registering.withLockedValue { registering in
            let notOpenYet = registering[userID]?.count { engine.connections.handle(of: $0) == nil } ?? 0
            try engine.checkConnectionLimit(of: userID, opening: notOpenYet)
            registering[userID, default: []].append(connectionID)
        }
    }

    func endRegistration(of userID: String, connectionID: String) {
        registering.withLockedValue { registering in
            registering[userID]?.removeAll { $0 == connectionID }
            if registering[userID]?.isEmpty == true { registering[userID] = nil }
            if registering.isEmpty { registering = [:] }
        }
    }

    /// Connections registering now.
    var registrations: Int { registering.withLockedValue { $0.values.reduce(0) { $0 + $1.count } } }
}
