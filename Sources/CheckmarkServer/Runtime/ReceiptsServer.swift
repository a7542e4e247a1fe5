import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CoreMetrics
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Prometheus

/// A running Checkmark node: storage, the receipts service, the gateway and the HTTP listener.
///
/// ``start(_:group:logger:)`` opens the data directory (failing with a ``StorageError`` that says
/// why), loads the state and starts listening. ``shutdown()`` is the graceful stop: readiness turns
/// false, the listener stops accepting, every WebSocket is closed with 1001, pending commits are
/// flushed, and storage is closed; the whole stop takes at most the configured shutdown timeout,
/// whatever storage does.
package final class ReceiptsServer: Sendable {
    package let configuration: ServerConfiguration
    package let listener: HTTPListener
    package let service: ReceiptsService
    package let gateway: Gateway
    package let registry: PrometheusCollectorRegistry
    private let engineGroup: MultiThreadedEventLoopGroup
    private let store: any ReceiptsStore
    private let logger: Logger
    private let fatal = NIOLockedValueBox<StorageError?>(nil)
    private let stopped: EventLoopPromise<Void>

    /// How often the journal's retention policy is applied at least.
    package static let pruneIntervalSeconds: Int64 = 60
    /// How often the server looks whether a prune is due before the interval is over.
    static let pruneCheckInterval = TimeAmount.seconds(1)
    /// How soon a prune follows one that removed ``RetentionPolicy/rowsPerPrune`` rows (a backlog).
    static let backlogPruneDelay = TimeAmount.milliseconds(200)

    /// Prunes `in` from now, then whenever ``RetentionPolicy/eventsBetweenPrunes`` events were journaled
    /// since the last prune, ``pruneIntervalSeconds`` after it at the latest, and soon while there
    /// is a backlog, until the service stops. Pruning as history is written keeps the database file
    /// (whose freed pages are reused, never returned) from growing past what retention keeps by
    /// more than about that many events.
    private static func prune(_ policy: RetentionPolicy, service: ReceiptsService, in delay: TimeAmount,
                              last: (events: Int64, at: NIODeadline)? = nil, logger: Logger) {
        service.engineLoop.scheduleTask(in: delay) {
            let journaled = service.journaledEvents
            if let last, journaled - last.events < policy.eventsBetweenPrunes, NIODeadline.now() - last.at < .seconds(pruneIntervalSeconds) {
                prune(policy, service: service, in: pruneCheckInterval, last: last, logger: logger)
                return
            }
            service.prune(policy).whenComplete { result in
                guard case .success(let removed) = result else {
                    // Storage failed (reported there) or the service stopped: a cluster node goes on
                    // after its database comes back, and so do its prunes (a stopped one's loop ends).
                    prune(policy, service: service, in: pruneCheckInterval, logger: logger)
                    return
                }
                if removed.entries + removed.events > 0 {
                    logger.debug("journal pruned", metadata: ["entries": "\(removed.entries)", "events": "\(removed.events)"])
                }
                let backlog = removed.entries + removed.events >= RetentionPolicy.rowsPerPrune
                prune(policy, service: service, in: backlog ? backlogPruneDelay : pruneCheckInterval,
                      last: backlog ? nil : (journaled, .now()), logger: logger)
            }
        }
    }

    /// The port actually bound (useful with port 0).
    package var port: Int { listener.port }

    package static func start(_ configuration: ServerConfiguration, group: any EventLoopGroup, logger: Logger) async throws -> ReceiptsServer {
        try configuration.validate()
        let store = try await openStore(configuration, logger: logger)
        let registry = PrometheusCollectorRegistry()
        let metrics = ServiceMetrics(factory: DescribedMetricsFactory(registry: registry, help: ServiceMetrics.help))
        let engineGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var compression = PerMessageDeflateConfiguration()
        compression.isEnabled = configuration.compression
        // Shared-frame mode: one compressed frame serves every recipient of a fan-out.
        compression.noContextTakeover = true
        let failure = NIOLockedValueBox<(@Sendable (StorageError) -> Void)?>(nil)
        let storageLost = NIOLockedValueBox<(@Sendable (StorageError) -> Void)?>(nil)
        let service: ReceiptsService
        do {
            let recorder = try configuration.recordPath.map { path throws(TraceRecorder.Failure) in try TraceRecorder(path: path) }
            service = try await ReceiptsService.start(
                store: store, engineLoop: engineGroup.next(), metrics: metrics, logger: logger,
                maxWatchedChannelsPerConnection: configuration.gateway.maxWatchedChannelsPerConnection,
                maxConnectionsPerUser: configuration.gateway.maxConnectionsPerUser,
                maxUserProfileBytes: configuration.maxUserProfileBytes, maxReactionsPerUser: configuration.maxReactionsPerUser,
                messageWindow: configuration.messageWindow,
                channelStateCacheBytes: configuration.channelStateCacheBytes,
                channelIdleTimeout: configuration.channelIdleTimeout,
                shardLease: .seconds(configuration.shardLeaseSeconds),
                peerLink: configuration.peerLinkSettings,
                compression: compression,
                recorder: recorder,
                onFatalError: { error in failure.withLockedValue { $0 }?(error) },
                onStorageLost: { error in storageLost.withLockedValue { $0 }?(error) })
        } catch {
            store.close()
            try? await engineGroup.shutdownGracefully()
            throw error
        }
        let refusals = RefusalLog(logger: logger, maxLinesPerSecond: configuration.refusalLogLinesPerSecond)
        let gateway = Gateway(
            service: service, authenticator: GatewayAuthenticator(
                apiKey: configuration.apiKey, apiSecret: configuration.apiSecret,
                maxResumeChannels: configuration.gateway.maxWatchedChannelsPerConnection,
                tokenClockSkewSeconds: Double(configuration.tokenClockSkewSeconds)),
            limits: configuration.gateway, metrics: metrics, logger: logger, refusals: refusals, accessLog: configuration.accessLog)
        let stoppingFlag = NIOLockedValueBox(false)
        let rest = RESTAPI(service: service, apiKey: configuration.apiKey, apiSecret: configuration.apiSecret,
                           jsonLimits: configuration.gateway.json,
                           rateLimiter: RESTRateLimiter(rate: configuration.restRequestsPerSecond, burst: configuration.restRequestBurst),
                           eventRateLimiter: RESTRateLimiter(rate: configuration.channelEventsPerSecond, burst: configuration.channelEventBurst),
                           maxCustomEventBytes: configuration.maxCustomEventBytes,
                           refusals: refusals, metrics: metrics, tokenClockSkewSeconds: Double(configuration.tokenClockSkewSeconds))
        let routes = CheckmarkRoutes(
            gateway: gateway, rest: rest, registry: configuration.metricsEnabled ? registry : nil,
            readiness: { service.isReady && !stoppingFlag.withLockedValue { $0 } }, refusals: refusals, metrics: metrics,
            logger: logger, accessLog: configuration.accessLog,
            demoPage: configuration.servesDemo ? DemoPage(
                apiKey: configuration.apiKey,
                developmentSecret: configuration.usesDevelopmentSecret ? configuration.apiSecret : nil) : nil)
        let corsRoutes = CORSRoutes(wrapped: routes, policy: configuration.cors, refusals: refusals)
        let listener: HTTPListener
        do {
            listener = try await HTTPListener.bind(
                host: configuration.host, port: configuration.port, group: group, routes: corsRoutes,
                handshake: ServerHandshake(compression: compression),
                httpLimits: HTTPLimits(
                    maxBodySize: configuration.maxRequestBodyBytes, headTimeout: .seconds(Int64(configuration.requestTimeoutSeconds)),
                    maxPendingConnections: configuration.maxPendingConnections, maxPipelinedBytes: configuration.maxPipelinedBytes,
                    acceptBackoff: .milliseconds(Int64(configuration.acceptBackoffMilliseconds))),
                webSocket: configuration.webSocketSettings)
        } catch {
            await service.close()
            try? await engineGroup.shutdownGracefully()
            throw error
        }
        let server = ReceiptsServer(
            configuration: configuration, listener: listener, service: service, gateway: gateway, registry: registry,
            engineGroup: engineGroup, store: store, logger: logger, stopping: stoppingFlag,
            stopped: group.next().makePromise(of: Void.self))
        failure.withLockedValue { $0 = { [weak server] error in server?.storageFailed(error) } }
        // A cluster node goes on after its database failed, but its clients' state goes: they are
        // closed with 1011 and reconnect (here once the state is reloaded, or on another node).
        storageLost.withLockedValue { $0 = { [weak gateway] _ in gateway?.closeAll(.unavailable, reason: "storage unavailable; reconnect") } }
        if let sqlite = store as? SQLiteStore {
            // Every page's structure is checked after start, not before: its time grows with the file.
            // A damaged file stops the server as a failed commit would.
            NIOThreadPool.singleton.runIfActive(eventLoop: group.next()) { try sqlite.verify() }.whenFailure { [weak server] error in
                guard let server, !server.stoppingFlag.withLockedValue({ $0 }) else { return }
                guard let error = error as? StorageError, case .corrupt = error else {
                    logger.error("the database's structure check could not run", metadata: ["error": "\(error)"])
                    return
                }
                logger.critical("the database failed its structure check", metadata: ["error": "\(error)"])
                server.storageFailed(error)
            }
        }
        if configuration.retention != .keepAll {
            Self.prune(configuration.retention, service: service, in: .seconds(1), logger: logger)
        }
        logger.info("checkmark listening", metadata: [
            "host": "\(configuration.host)", "port": "\(listener.port)",
            "storage": "\((store as? PostgresStore).map { "\($0.location) (cluster node)" } ?? configuration.dataDirectory)",
        ])
        if configuration.usesDevelopmentSecret {
            logger.warning("using the development api secret: loopback only, never in production")
        }
        return server
    }

    /// SQLite in the data directory, or the cluster's PostgreSQL database when one is configured.
    private static func openStore(_ configuration: ServerConfiguration, logger: Logger) async throws -> any ReceiptsStore {
        guard let url = configuration.postgresURL else {
            return try SQLiteStore(directory: try DataDirectory(path: configuration.dataDirectory),
                                   checkpoints: configuration.sqliteCheckpoints, cacheBytes: configuration.sqliteCacheBytes, logger: logger)
        }
        let location = try PostgresLocation(url: url)
        let stalled = TimeAmount.seconds(Int64(configuration.shardLeaseSeconds))
        return try await NIOThreadPool.singleton.runIfActive {
            try PostgresStore(location: location, logger: logger, stalledTransactionTimeout: stalled)
        }
    }

    private init(configuration: ServerConfiguration, listener: HTTPListener, service: ReceiptsService, gateway: Gateway,
                 registry: PrometheusCollectorRegistry, engineGroup: MultiThreadedEventLoopGroup, store: any ReceiptsStore,
                 logger: Logger, stopping: NIOLockedValueBox<Bool>, stopped: EventLoopPromise<Void>) {
        self.configuration = configuration
        self.listener = listener
        self.service = service
        self.gateway = gateway
        self.registry = registry
        self.engineGroup = engineGroup
        self.store = store
        self.logger = logger
        self.stoppingFlag = stopping
        self.stopped = stopped
    }

    private let stoppingFlag: NIOLockedValueBox<Bool>

    /// The storage error that stopped the server, if one did.
    package var fatalError: StorageError? { fatal.withLockedValue { $0 } }

    /// Completes when the server has stopped (after ``shutdown()`` or a storage failure).
    package func waitUntilStopped() async {
        try? await stopped.futureResult.get()
    }

    private func storageFailed(_ error: StorageError) {
        fatal.withLockedValue { $0 = error }
        Task { await self.shutdown(.unavailable) }
    }

    /// Graceful stop (see the type's documentation). Safe to call more than once.
    package func shutdown() async {
        await shutdown(.shuttingDown)
    }

    private func shutdown(_ refusal: GatewayRefusal) async {
        let first = stoppingFlag.withLockedValue { flag in
            defer { flag = true }
            return !flag
        }
        guard first else {
            await waitUntilStopped()
            return
        }
        logger.info("shutting down", metadata: ["connections": "\(gateway.connectionCount)"])
        let timeout = TimeAmount.seconds(Int64(configuration.shutdownTimeoutSeconds))
        let deadline = NIODeadline.now() + timeout
        try? await listener.close()
        gateway.closeAll(refusal, reason: refusal == .shuttingDown ? "server shutting down" : "storage failed")
        // Clients get the close handshake's time, but for the part kept for storage to finish its
        // commits; past it, what is left is dropped.
        let clientsDeadline = deadline - Self.storageShare(of: timeout)
        while gateway.connectionCount > 0 && NIODeadline.now() < clientsDeadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        // A database that stopped answering must not hold the stop past the timeout: what was not
        // durable by then was never acknowledged, and the process goes without it.
        let service = service
        let engineGroup = engineGroup
        let finished = await Self.run(until: deadline) {
            await service.close()
            try? await engineGroup.shutdownGracefully()
        }
        if !finished {
            logger.error("storage did not finish within shutdown_timeout; stopping without it", metadata: [
                "shutdown_timeout_seconds": "\(configuration.shutdownTimeoutSeconds)",
            ])
        }
        logger.info("stopped")
        stopped.succeed()
    }

    /// The part of the shutdown timeout kept for the last commits and closing storage: a quarter of
    /// it, at most 2 s.
    static func storageShare(of timeout: TimeAmount) -> TimeAmount {
        min(.nanoseconds(timeout.nanoseconds / 4), .seconds(2))
    }

    /// Runs `work` in a task of its own and waits for it until `deadline` at the latest: true when it
    /// finished by then (otherwise it is left running).
    static func run(until deadline: NIODeadline, _ work: @escaping @Sendable () async -> Void) async -> Bool {
        let done = NIOLockedValueBox(false)
        Task {
            await work()
            done.withLockedValue { $0 = true }
        }
        while !done.withLockedValue({ $0 }) {
            guard NIODeadline.now() < deadline else { return false }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return true
    }
}
