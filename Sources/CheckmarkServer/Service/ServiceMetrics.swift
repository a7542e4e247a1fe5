import CheckmarkCore
import CoreMetrics

/// The server's metrics (exposed at `/metrics`). Built on one swift-metrics factory, so that each
/// server instance (and each test) has its own registry.
public final class ServiceMetrics: Sendable {
    /// Open WebSocket connections of the gateway.
    public let connections: Meter
    public let framesIn: Counter
    public let framesOut: Counter
    public let slowConsumerDisconnects: Counter
    /// Receipts that rules 6-8 kept from other users (read or delivery events not sent to others).
    public let suppressedByPrivacy: Counter
    /// Channel resumes that replayed the missed events, and how many events they replayed.
    public let resumes: Counter
    public let replayedEvents: Counter
    /// Channel resumes the journal could not serve (`channel.resume_failed`).
    public let resumeFailed: Counter
    public let commitBatchSize: Recorder
    public let commitLatency: Timer
    private let eventsByType: [String: Counter]
    private let confirmationsByType: [String: Counter]
    private let rejections: Counter

    /// Event types counted by `checkmark_events_fanned_out_total`.
    static let eventTypes = [
        "message.new", "notification.message_new", "message.read", "message.delivered", "notification.mark_read",
        "notification.mark_unread", "health.check",
    ]
    /// Confirmation kinds counted by `checkmark_confirmations_total`.
    static let confirmationTypes = ["message", "read", "read_many", "thread_read", "unread", "delivered", "other"]

    public init(factory: any MetricsFactory) {
        connections = Meter(label: "checkmark_connections", factory: factory)
        framesIn = Counter(label: "checkmark_frames_in_total", factory: factory)
        framesOut = Counter(label: "checkmark_frames_out_total", factory: factory)
        slowConsumerDisconnects = Counter(label: "checkmark_slow_consumer_disconnects_total", factory: factory)
        suppressedByPrivacy = Counter(label: "checkmark_receipts_suppressed_by_privacy_total", factory: factory)
        resumes = Counter(label: "checkmark_channel_resumes_total", factory: factory)
        replayedEvents = Counter(label: "checkmark_events_replayed_total", factory: factory)
        resumeFailed = Counter(label: "checkmark_channel_resumes_failed_total", factory: factory)
        commitBatchSize = Recorder(label: "checkmark_commit_batch_size", factory: factory)
        commitLatency = Timer(label: "checkmark_commit_duration_seconds", factory: factory)
        rejections = Counter(label: "checkmark_commands_rejected_total", factory: factory)
        var events: [String: Counter] = [:]
        for type in Self.eventTypes {
            events[type] = Counter(label: "checkmark_events_fanned_out_total", dimensions: [("type", type)], factory: factory)
        }
        eventsByType = events
        var confirmations: [String: Counter] = [:]
        for type in Self.confirmationTypes {
            confirmations[type] = Counter(label: "checkmark_confirmations_total", dimensions: [("type", type)], factory: factory)
        }
        confirmationsByType = confirmations
    }

    func fannedOut(type: String, recipients: Int) {
        eventsByType[type]?.increment(by: Int64(recipients))
    }

    func resumed(replayedEvents count: Int) {
        resumes.increment()
        replayedEvents.increment(by: Int64(count))
    }

    func accepted(_ command: ReceiptsCommand) {
        let type = switch command {
        case .sendMessage: "message"
        case .markRead: "read"
        case .markReadMany: "read_many"
        case .markThreadRead: "thread_read"
        case .markUnread: "unread"
        case .markDelivered: "delivered"
        default: "other"
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
}
