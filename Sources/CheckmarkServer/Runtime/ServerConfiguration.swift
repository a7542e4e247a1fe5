import CheckmarkAuth
import CheckmarkCore
import CheckmarkStorage
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import CheckmarkWire
import Logging
import NIOCore

/// Everything `checkmark serve` can be told. Filled from defaults, then a config file, then the
/// environment, then flags (later wins); ``validate()`` checks it before anything starts.
package struct ServerConfiguration: Sendable {
    package var host = "127.0.0.1"
    package var port = 8080
    package var dataDirectory = "./checkmark-data"
    /// A PostgreSQL database to store in, shared with the cluster's other nodes; nil stores in SQLite
    /// in ``dataDirectory``.
    package var postgresURL: String?
    /// Where to record a live trace of every command and event (`record`); nil records nothing.
    package var recordPath: String?
    package var apiKey = ServerConfiguration.developmentAPIKey
    package var apiSecret = ServerConfiguration.developmentAPISecret
    package var logLevel: Logger.Level = .info
    /// `text` (swift-log's plain lines) or `json` (one object a line).
    package var logFormat = LogFormat.text
    /// One `info` line per REST request and per closed WebSocket connection.
    package var accessLog = true
    package var metricsEnabled = true
    /// Whether `/demo` serves the demo page (by default only with the development credentials).
    package var demo = DemoSetting.auto
    /// Which web origins may call the REST API from a browser (none by default).
    package var cors = CORSPolicy.none
    package var gateway = GatewayLimits()
    package var maxMessageBytes = WebSocketLimits.default.maxMessageSize
    /// Largest REST request body; 413 (Stream code 22) past it.
    package var maxRequestBodyBytes = HTTPLimits().maxBodySize
    /// Seconds a whole HTTP request (head and body) may take to arrive, and a keep-alive connection may
    /// stay idle; 408 past it.
    package var requestTimeoutSeconds = 10
    /// HTTP connections that are not WebSocket yet, at once; 503 past it.
    package var maxPendingConnections = HTTPLimits().maxPendingConnections
    /// Bytes of pipelined requests held while an earlier one is answered; past it the connection closes.
    package var maxPipelinedBytes = HTTPLimits().maxPipelinedBytes
    /// Milliseconds the listener stops accepting after accept failed for want of descriptors or memory.
    package var acceptBackoffMilliseconds = Int(HTTPLimits().acceptBackoff.nanoseconds / 1_000_000)
    /// Seconds a token's `nbf` and `iat` may lie ahead of the server's clock (4001 / 401 further).
    package var tokenClockSkewSeconds = Int(JWT.defaultClockSkewSeconds)
    /// Refusal lines logged per second at most; the others are counted in the next line's `suppressed`.
    package var refusalLogLinesPerSecond = 20
    /// REST requests per second one user token may make on average, and at once (429 past them).
    package var restRequestsPerSecond = 100
    package var restRequestBurst = 200
    /// Typing and custom events per second one user (all its connections together) may send on
    /// average, and at once (429 past them). Server tokens are not limited.
    package var channelEventsPerSecond = 10
    package var channelEventBurst = 20
    /// Largest custom event (its JSON as sent, without the user Checkmark adds), in bytes; 400 past it.
    package var maxCustomEventBytes = 5 << 10
    /// Largest user profile (name, image, custom fields), in bytes; 400 past it. Equal on every node.
    package var maxUserProfileBytes = ReceiptsEngine.defaultMaxUserProfileBytes
    /// Reaction types one user may have on one message; 400 past it. Equal on every node.
    package var maxReactionsPerUser = ReceiptsEngine.defaultMaxReactionsPerUser
    /// Bytes of channel states' member, read-state and message lists kept encoded between watches; 0 keeps none.
    package var channelStateCacheBytes = ChannelStateFragments.defaultBudgetBytes
    /// `message_window`: texts of each channel's newest messages held in memory (``MessageLog``).
    package var messageWindow = ReceiptsEngine.defaultMessageWindow
    /// `channel_idle_timeout`: seconds a loaded channel stays in memory with no watcher and no change
    /// before it goes back to storage (``IdleChannels``); 0 keeps loaded channels until the process ends.
    package var channelIdleTimeoutSeconds = 300
    /// ``channelIdleTimeoutSeconds`` as the service takes it: nil when 0 (never).
    package var channelIdleTimeout: TimeAmount? {
        channelIdleTimeoutSeconds > 0 ? .seconds(Int64(channelIdleTimeoutSeconds)) : nil
    }
    /// When the embedded database's write-ahead log is checkpointed (`wal_checkpoint_pages`, `max_wal_pages`).
    package var sqliteCheckpoints = SQLiteCheckpointPolicy()
    /// Bytes of the embedded database's page cache (`sqlite_cache`), at most ``SQLiteStore/maxCacheBytes``.
    package var sqliteCacheBytes = SQLiteStore.defaultCacheBytes
    package var keepaliveSeconds = 30
    package var idleTimeoutSeconds = 120
    package var compression = true
    /// Seconds of journal history kept (`journal_max_age`); nil keeps it whatever its age.
    package var journalMaxAgeSeconds: Int64?
    /// Journal events kept per channel (`journal_max_events_per_channel`): nil keeps what a resume may
    /// replay (``GatewayLimits/maxResumeEvents``), 0 keeps all.
    package var journalMaxEventsPerChannel: Int?

    /// What the journal keeps: by default as many events per channel as a resume replays.
    package var retention: RetentionPolicy {
        let perChannel = journalMaxEventsPerChannel ?? gateway.maxResumeEvents
        return RetentionPolicy(maxAgeSeconds: journalMaxAgeSeconds, maxEventsPerChannel: perChannel > 0 ? perChannel : nil)
    }
    /// Seconds a graceful shutdown may take before remaining connections are dropped.
    package var shutdownTimeoutSeconds = 10
    /// `shard_lease`: seconds a cluster node's shard lease lasts without a renewal (by the
    /// database's clock); it is renewed every fifth of it.
    package var shardLeaseSeconds = 5
    /// `peer_link`: `HOST:PORT` where this cluster node takes direct links from the others
    /// (``PeerLinkServer``); nil: forwarded commands go through PostgreSQL's NOTIFY.
    package var peerLink: String?

    /// ``peerLink`` as settings for the service (nil when unset or malformed: ``problems()`` says so).
    package var peerLinkSettings: PeerLinkSettings? {
        guard let peerLink, let (host, port) = PeerLinkSettings.hostAndPort(peerLink) else { return nil }
        return PeerLinkSettings(host: host, port: port, secret: apiSecret)
    }

    /// The clearly-marked development credentials: usable on loopback only.
    package static let developmentAPIKey = "checkmark-dev-key"
    package static let developmentAPISecret = "checkmark-dev-secret-NOT-FOR-PRODUCTION"

    package init() {}

    package var usesDevelopmentSecret: Bool { apiSecret == Self.developmentAPISecret }

    /// Whether `/demo` is served, ``demo`` applied to these credentials.
    package var servesDemo: Bool { demo.serves(usingDevelopmentSecret: usesDevelopmentSecret) }

    /// A start-up error, printed as it is.
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
    }

    /// The first of ``problems()``, as a start-up error naming its key.
    package func validate() throws(Invalid) {
        if let first = problems().first { throw Invalid(description: "\(first.key): \(first.message)") }
    }

    /// Every value out of its range or inconsistent with another, by the key (as in
    /// ``ConfigurationLoader/keys``) it belongs to.
    package func problems() -> [(key: String, message: String)] {
        var problems: [(key: String, message: String)] = []
        if !(0...65_535).contains(port) { problems.append(("port", "port must be between 0 and 65535, not \(port)")) }
        if host.isEmpty { problems.append(("host", "host must not be empty")) }
        if dataDirectory.isEmpty { problems.append(("data_dir", "data_dir must not be empty")) }
        if let postgresURL {
            do { _ = try PostgresLocation(url: postgresURL) } catch { problems.append(("postgres_url", error.description)) }
        }
        if apiKey.isEmpty { problems.append(("api_key", "api_key must not be empty")) }
        if apiSecret.utf8.count < 16 { problems.append(("api_secret", "api_secret must be at least 16 bytes")) }
        if usesDevelopmentSecret && !Self.isLoopback(host) {
            problems.append(("host", "the development api secret may only listen on a loopback address (127.0.0.1, ::1, localhost), not \(host); set --api-secret or CHECKMARK_API_SECRET"))
        }
        for (key, value) in [
            ("max_connections_per_user", gateway.maxConnectionsPerUser), ("max_connections", gateway.maxConnections),
            ("max_watched_channels", gateway.maxWatchedChannelsPerConnection), ("commands_per_second", gateway.commandsPerSecond),
            ("command_burst", gateway.commandBurst), ("max_outbound_buffer", gateway.maxOutboundBufferBytes),
            ("slow_consumer_grace", gateway.slowConsumerGraceMilliseconds), ("max_resume_events", gateway.maxResumeEvents),
            ("max_message_size", maxMessageBytes), ("max_request_body", maxRequestBodyBytes),
            ("json_max_depth", gateway.json.maxDepth), ("json_max_keys", gateway.json.maxKeysPerObject),
            ("json_max_string", gateway.json.maxStringBytes), ("max_user_profile", maxUserProfileBytes),
            ("max_reactions_per_user", maxReactionsPerUser),
            ("request_timeout", requestTimeoutSeconds), ("max_pending_connections", maxPendingConnections),
            ("max_pipelined_bytes", maxPipelinedBytes), ("accept_backoff", acceptBackoffMilliseconds),
            ("refusal_log_lines_per_second", refusalLogLinesPerSecond),
            ("rest_requests_per_second", restRequestsPerSecond), ("rest_request_burst", restRequestBurst),
            ("channel_events_per_second", channelEventsPerSecond), ("channel_event_burst", channelEventBurst),
            ("max_custom_event", maxCustomEventBytes),
            ("shutdown_timeout", shutdownTimeoutSeconds), ("message_window", messageWindow),
        ] where value <= 0 {
            problems.append((key, "\(key) must be positive, not \(value)"))
        }
        if tokenClockSkewSeconds < 0 { problems.append(("token_clock_skew", "token_clock_skew must not be negative, not \(tokenClockSkewSeconds)")) }
        if sqliteCheckpoints.backgroundPages <= 0 {
            problems.append(("wal_checkpoint_pages", "wal_checkpoint_pages must be positive, not \(sqliteCheckpoints.backgroundPages)"))
        } else if sqliteCheckpoints.limitPages < sqliteCheckpoints.backgroundPages {
            problems.append(("max_wal_pages", "max_wal_pages must be at least wal_checkpoint_pages (\(sqliteCheckpoints.backgroundPages)), not \(sqliteCheckpoints.limitPages)"))
        }
        if !(1...SQLiteStore.maxCacheBytes).contains(sqliteCacheBytes) {
            problems.append(("sqlite_cache", "sqlite_cache must be between 1 and \(SQLiteStore.maxCacheBytes), not \(sqliteCacheBytes)"))
        }
        if channelStateCacheBytes < 0 {
            problems.append(("channel_state_cache", "channel_state_cache must not be negative, not \(channelStateCacheBytes)"))
        }
        if keepaliveSeconds < 0 { problems.append(("keepalive", "keepalive must not be negative, not \(keepaliveSeconds)")) }
        if channelIdleTimeoutSeconds < 0 {
            problems.append(("channel_idle_timeout", "channel_idle_timeout must not be negative, not \(channelIdleTimeoutSeconds)"))
        }
        if idleTimeoutSeconds < 0 { problems.append(("idle_timeout", "idle_timeout must not be negative, not \(idleTimeoutSeconds)")) }
        if !(1...3_600).contains(shardLeaseSeconds) {
            problems.append(("shard_lease", "shard_lease must be between 1 and 3600 seconds, not \(shardLeaseSeconds)"))
        }
        if let peerLink {
            if let link = peerLinkSettings, !link.host.isEmpty, (0...65_535).contains(link.port) {
                if ["0.0.0.0", "::", "*"].contains(link.host) {
                    problems.append(("peer_link", "peer_link must name an address the other nodes reach this node at, not \(link.host)"))
                }
                if postgresURL == nil { problems.append(("peer_link", "peer_link links the nodes of a cluster: set postgres_url too")) }
                if usesDevelopmentSecret && !Self.isLoopback(link.host) {
                    problems.append(("peer_link", "peer_link must be a loopback address with the development api secret, not \(link.host); set --api-secret or CHECKMARK_API_SECRET"))
                }
            } else {
                problems.append(("peer_link", "peer_link must be HOST:PORT (port 0 to 65535), not '\(peerLink)'"))
            }
        }
        return problems
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    var webSocketSettings: WebSocketSettings {
        var limits = WebSocketLimits.default
        limits.maxMessageSize = maxMessageBytes
        limits.maxFrameSize = min(limits.maxFrameSize, maxMessageBytes)
        return WebSocketSettings(limits: limits, timeouts: WebSocketTimeouts(
            keepaliveInterval: keepaliveSeconds > 0 ? .seconds(Int64(keepaliveSeconds)) : nil,
            idleTimeout: idleTimeoutSeconds > 0 ? .seconds(Int64(idleTimeoutSeconds)) : nil))
    }
}
