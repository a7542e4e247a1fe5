import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// What every gateway connection of a server shares: the service, authentication, limits, metrics,
/// and the open connections (so that shutdown can close them all with 1001).
package final class Gateway: Sendable {
    package let service: ReceiptsService
    package let authenticator: GatewayAuthenticator
    package let limits: GatewayLimits
    /// The same limits, held once for every connection's session.
    let sessionLimits: SharedValue<GatewayLimits>
    package let metrics: ServiceMetrics
    package let logger: Logger
    let refusals: RefusalLog
    /// Whether each closed connection gets an `info` line (setting `access_log`).
    let accessLog: Bool
    let counter: ConnectionCounter
    /// Whether the outbound limit is at least what a writable connection can hold (the channel's
    /// high-water mark plus the frames waiting for the end of a tick): then a writable connection is
    /// within the limit without asking how much it holds.
    let writableIsWithinOutboundLimit: Bool
    private let open = NIOLockedValueBox(Set<OpenGatewayConnection>())

    init(service: ReceiptsService, authenticator: GatewayAuthenticator, limits: GatewayLimits, metrics: ServiceMetrics, logger: Logger,
         refusals: RefusalLog? = nil, accessLog: Bool = false) {
        self.refusals = refusals ?? RefusalLog(logger: logger)
        self.accessLog = accessLog
        self.service = service
        self.authenticator = authenticator
        self.limits = limits
        sessionLimits = SharedValue(limits)
        self.metrics = metrics
        self.logger = logger
        counter = ConnectionCounter(limits: limits)
        writableIsWithinOutboundLimit = limits.maxOutboundBufferBytes
            >= GatewayLimits.channelHighWaterMark + WebSocketSession.maxHeldBytes
    }

    /// Open gateway connections.
    package var connectionCount: Int { open.withLockedValue { $0.count } }

    func opened(_ connection: GatewayConnection) {
        _ = open.withLockedValue { $0.insert(OpenGatewayConnection(connection: connection)) }
    }

    func closed(_ connection: GatewayConnection) {
        _ = open.withLockedValue { $0.remove(OpenGatewayConnection(connection: connection)) }
    }

    /// Closes every open connection for `refusal` (at shutdown: 1001; storage failed: 1011), each on
    /// its own event loop.
    package func closeAll(_ refusal: GatewayRefusal = .shuttingDown, reason: String) {
        let connections = open.withLockedValue { Array($0) }
        for open in connections {
            open.connection.eventLoop.execute { open.connection.close(refusal, reason: reason) }
        }
    }
}
