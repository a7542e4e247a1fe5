import CheckmarkCore
import CoreMetrics

/// The server's metrics (exposed at `/metrics`). Built on one swift-metrics factory, so that each
/// server instance (and each test) has its own registry; ``help`` describes every family, for
/// ``DescribedMetricsFactory``. Label values come from bounded sets only (event and confirmation
/// types, route names, close codes, auth failure reasons), never from client input.
package final class ServiceMetrics: Sendable {
    /// Open WebSocket connections of the gateway.
    package let connections: Meter
    package let framesIn: Counter
    package let framesOut: Counter
    package let slowConsumerDisconnects: Counter
    /// Receipts that rules 6-8 kept from other users (read or delivery events not sent to others).
    package let suppressedByPrivacy: Counter
    /// Typing events kept from everyone by the sender's `typing_indicators`, and by the channel type's `typing_events`.
    private let typingSuppressedByPrivacy: Counter
    private let typingSuppressedByChannelType: Counter
    /// Channel resumes that replayed the missed events, and how many events they replayed.
    package let resumes: Counter
    package let replayedEvents: Counter
    /// Channel resumes the journal could not serve (`channel.resume_failed`).
    package let resumeFailed: Counter
    package let commitBatchSize: Recorder
    package let commitLatency: Timer
    /// Channels loaded from storage on first use, and loaded channels that went back to storage idle.
    package let channelLoads: Counter
    package let channelUnloads: Counter
    package let storageReloads: Counter
    /// Cluster: shards this node owns (``ShardLeases``), and leases it lost without handing them over.
    package let shardsOwned: Gauge
    package let shardLeasesLost: Counter
    package let fenceRejections: Counter
    package let commandsForwarded: Counter
    /// Cluster: peer messages this node received over direct links (`peer_link`), not through
    /// PostgreSQL, by kind (``PeerMessage``'s).
    private let peerLinkMessagesByKind: [String: Counter]
    /// Messages accepted (WebSocket or REST), counted apart from confirmations.
    package let messagesSent: Counter
    private let eventsByType: [String: Counter]
    private let confirmationsByType: [ConfirmationType: Counter]
    private let rejections: Counter
    private let closesByCode: [String: Counter]
    private let authFailuresByReason: [AuthFailureReason: Counter]
    private let factory: any MetricsFactory

    /// Help text of every family this type (and ``BuildInfo``) registers.
    package static let help: [String: String] = [
        "checkmark_build_info": "The version and commit of this binary, as labels; always 1.",
        "checkmark_connections": "Open WebSocket connections of the gateway.",
        "checkmark_frames_in_total": "WebSocket messages received from clients.",
        "checkmark_frames_out_total": "WebSocket messages sent to clients.",
        "checkmark_slow_consumer_disconnects_total": "Connections closed with 4009 because they did not read what they were sent.",
        "checkmark_receipts_suppressed_by_privacy_total": "Read or delivery events kept from other users by their privacy settings.",
        "checkmark_typing_suppressed_total": "Typing events kept from everyone, by reason: the sender's typing_indicators (privacy) or the channel type's typing_events (channel_type).",
        "checkmark_channel_resumes_total": "Channel resumes that replayed the missed events.",
        "checkmark_events_replayed_total": "Events replayed by channel resumes.",
        "checkmark_channel_resumes_failed_total": "Channel resumes the journal could not serve (channel.resume_failed).",
        "checkmark_commit_batch_size": "Journal entries written per storage commit.",
        "checkmark_commit_duration_seconds": "Time one storage commit took.",
        "checkmark_commands_rejected_total": "Commands the receipts engine refused (invalid, not allowed, not found).",
        "checkmark_events_fanned_out_total": "Events delivered to connections, by event type (one per recipient).",
        "checkmark_messages_sent_total": "Messages accepted, over WebSocket or REST.",
        "checkmark_channel_loads_total": "Channels loaded from storage on first use (a start loads none).",
        "checkmark_channel_unloads_total": "Loaded channels that went back to storage after channel_idle_timeout without watchers or changes.",
        "checkmark_storage_reloads_total": "Times a cluster node reloaded its state from the database after a failed commit cycle.",
        "checkmark_shards_owned": "Shards a cluster node holds under lease (256 shards over the live nodes).",
        "checkmark_commands_forwarded_total": "Commands a cluster node sent to the owner of their channel's shard instead of applying them itself.",
        "checkmark_peer_link_messages_total": "Peer messages a cluster node received over a direct link from another node instead of through PostgreSQL, by kind: forward (a command for a shard it owns), forwarded (the answer to one it forwarded), entries (the entries another node committed), committed (how far another node committed, when its entries were too large to send), other.",
        "checkmark_fence_rejections_total": "Commits a cluster node made as a shard's owner that the database refused: another node owned the shard by then.",
        "checkmark_shard_leases_lost_total": "Shard leases a cluster node lost without handing them over: a renewal refused, or not renewed in time.",
        "checkmark_confirmations_total": "Confirmations accepted (read, read_many, thread_read, unread, delivered) that changed state.",
        "checkmark_http_requests_total": "HTTP requests answered, by route name and status (WebSocket upgrades as route connect).",
        "checkmark_http_request_duration_seconds": "Time from a complete request to its answer, by route name.",
        "checkmark_websocket_closes_total": "WebSocket connections of the gateway that ended, by close code (1006: no close frame).",
        "checkmark_auth_failures_total": "Requests and connections refused for their credentials, by reason.",
    ]

    /// Event types counted by `checkmark_events_fanned_out_total`.
    static let eventTypes = [
        "message.new", "notification.message_new", "message.read", "message.delivered", "notification.mark_read",
        "notification.mark_unread", "notification.thread_message_new", "health.check", "typing.start", "typing.stop", "custom",
    ]

    /// The `type` a signal is counted under: its own for typing, `custom` for every custom event
    /// (their types are the clients' to choose: one series each would grow without bound).
    static func signalType(_ type: String) -> String {
        type == "typing.start" || type == "typing.stop" ? type : "custom"
    }

    /// Counts a signal that privacy or the channel type kept from everyone.
    func signalSuppressed(_ reason: SignalSuppression) {
        switch reason {
        case .senderPrivacy: typingSuppressedByPrivacy.increment()
        case .channelType: typingSuppressedByChannelType.increment()
        }
    }

    /// The kinds counted by `checkmark_confirmations_total{type}`.
    enum ConfirmationType: String, CaseIterable {
        case read, readMany = "read_many", threadRead = "thread_read", unread, delivered
    }

    /// Close codes with their own `checkmark_websocket_closes_total{code}` series; any other is `other`.
    static let closeCodes: [Int] = [1000, 1001, 1002, 1003, 1006, 1007, 1008, 1009, 1011, 4001, 4002, 4003, 4004, 4008, 4009]

    /// The label values of `checkmark_http_requests_total{route}`: every route's name, plus
    /// ``unmatchedRoute`` for a path no route serves and ``refusedRoute`` for a request the
    /// listener refused before routing (too large, too slow, malformed).
    static let unmatchedRoute = "unmatched"
    static let refusedRoute = "refused"

    package init(factory: any MetricsFactory) {
        self.factory = factory
        connections = Meter(label: "checkmark_connections", factory: factory)
        framesIn = Counter(label: "checkmark_frames_in_total", factory: factory)
        framesOut = Counter(label: "checkmark_frames_out_total", factory: factory)
        slowConsumerDisconnects = Counter(label: "checkmark_slow_consumer_disconnects_total", factory: factory)
        suppressedByPrivacy = Counter(label: "checkmark_receipts_suppressed_by_privacy_total", factory: factory)
        typingSuppressedByPrivacy = Counter(label: "checkmark_typing_suppressed_total", dimensions: [("reason", "privacy")], factory: factory)
        typingSuppressedByChannelType = Counter(label: "checkmark_typing_suppressed_total", dimensions: [("reason", "channel_type")], factory: factory)
        resumes = Counter(label: "checkmark_channel_resumes_total", factory: factory)
        replayedEvents = Counter(label: "checkmark_events_replayed_total", factory: factory)
        resumeFailed = Counter(label: "checkmark_channel_resumes_failed_total", factory: factory)
        commitBatchSize = Recorder(label: "checkmark_commit_batch_size", factory: factory)
        commitLatency = Timer(label: "checkmark_commit_duration_seconds", factory: factory)
        rejections = Counter(label: "checkmark_commands_rejected_total", factory: factory)
        messagesSent = Counter(label: "checkmark_messages_sent_total", factory: factory)
        channelLoads = Counter(label: "checkmark_channel_loads_total", factory: factory)
        channelUnloads = Counter(label: "checkmark_channel_unloads_total", factory: factory)
        storageReloads = Counter(label: "checkmark_storage_reloads_total", factory: factory)
        shardsOwned = Gauge(label: "checkmark_shards_owned", factory: factory)
        shardLeasesLost = Counter(label: "checkmark_shard_leases_lost_total", factory: factory)
        fenceRejections = Counter(label: "checkmark_fence_rejections_total", factory: factory)
        commandsForwarded = Counter(label: "checkmark_commands_forwarded_total", factory: factory)
        peerLinkMessagesByKind = Dictionary(uniqueKeysWithValues: ["forward", "forwarded", "entries", "committed", "other"].map {
            ($0, Counter(label: "checkmark_peer_link_messages_total", dimensions: [("kind", $0)], factory: factory))
        })
        var events: [String: Counter] = [:]
        for type in Self.eventTypes {
            events[type] = Counter(label: "checkmark_events_fanned_out_total", dimensions: [("type", type)], factory: factory)
        }
        eventsByType = events
        var confirmations: [ConfirmationType: Counter] = [:]
        for type in ConfirmationType.allCases {
            confirmations[type] = Counter(label: "checkmark_confirmations_total", dimensions: [("type", type.rawValue)], factory: factory)
        }
        confirmationsByType = confirmations
        var closes: [String: Counter] = [:]
        for code in Self.closeCodes.map(String.init) + ["other"] {
            closes[code] = Counter(label: "checkmark_websocket_closes_total", dimensions: [("code", code)], factory: factory)
        }
        closesByCode = closes
        var auth: [AuthFailureReason: Counter] = [:]
        for reason in AuthFailureReason.allCases {
            auth[reason] = Counter(label: "checkmark_auth_failures_total", dimensions: [("reason", reason.rawValue)], factory: factory)
        }
        authFailuresByReason = auth
        Gauge(label: "checkmark_build_info", dimensions: [("version", BuildInfo.version), ("commit", BuildInfo.commit)], factory: factory)
            .record(1)
    }

    /// A peer message of `kind` came over a direct link (kinds other than forwarded commands, their
    /// answers and commits announced count as `other`).
    func receivedOverLink(kind: String) {
        (peerLinkMessagesByKind[kind] ?? peerLinkMessagesByKind["other"])?.increment()
    }

    func fannedOut(type: String, recipients: Int) {
        eventsByType[type]?.increment(by: Int64(recipients))
    }

    func resumed(replayedEvents count: Int) {
        resumes.increment()
        replayedEvents.increment(by: Int64(count))
    }

    /// Counts an accepted command that changed state: messages in `checkmark_messages_sent_total`,
    /// confirmations in `checkmark_confirmations_total{type}`, anything else not at all.
    func accepted(_ command: ReceiptsCommand) {
        let type: ConfirmationType
        switch command {
        case .sendMessage:
            messagesSent.increment()
            return
        case .markRead: type = .read
        case .markReadMany: type = .readMany
        case .markThreadRead: type = .threadRead
        case .markUnread: type = .unread
        case .markDelivered: type = .delivered
        case .upsertUser, .updateUser, .createChannelType, .updateChannelType, .createChannel, .addMembers, .removeMembers,
             .connect, .disconnect, .watch, .stopWatching, .updateMessage, .deleteMessage, .sendReaction, .deleteReaction:
            return
        }
        confirmationsByType[type]?.increment()
    }

    func rejected(_ error: ReceiptsError) {
        rejections.increment()
    }

    func committed(batchSize: Int, seconds: Double) {
        commitBatchSize.record(batchSize)
        commitLatency.recordNanoseconds(Int64(seconds * 1e9))
    }

    /// One HTTP request answered: `route` is a route's name (``APIRoute``), ``unmatchedRoute`` or
    /// ``refusedRoute``, never the raw path.
    func answered(route: String, status: Int, nanoseconds: Int64) {
        Counter(label: "checkmark_http_requests_total", dimensions: [("route", route), ("status", "\(status)")], factory: factory)
            .increment()
        Timer(label: "checkmark_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(nanoseconds)
    }

    /// One request the listener refused before routing it (too large, too slow, malformed, too many waiting).
    func refusedByListener(status: Int) {
        Counter(label: "checkmark_http_requests_total", dimensions: [("route", Self.refusedRoute), ("status", "\(status)")], factory: factory)
            .increment()
    }

    /// One gateway connection ended; nil when it ended without a close frame (counted as 1006).
    func closed(code: Int?) {
        let code = code ?? 1006
        (closesByCode[Self.closeCodes.contains(code) ? "\(code)" : "other"])?.increment()
    }

    func authenticationFailed(_ reason: AuthFailureReason) {
        authFailuresByReason[reason]?.increment()
    }
}
