/// The latencies the harness measures, each into its own HdrHistogram (microseconds).
package enum Metric: Int, CaseIterable, Sendable, Codable {
    /// `message.new`: from the publisher's scheduled send time to a watcher receiving it.
    case messageNew
    /// From a member's `mark_delivered` to the message's author receiving `message.delivered`.
    case deliveredSeenByAuthor
    /// From a member's mark read to the message's author receiving `message.read`.
    case readSeenByAuthor
    /// From sending a command to its (durable) reply.
    case commandReply
    /// From opening the TCP connection to the first `health.check` (authenticated).
    case connect

    package var name: String {
        switch self {
        case .messageNew: "message.new latency"
        case .deliveredSeenByAuthor: "confirmation -> author sees delivered"
        case .readSeenByAuthor: "confirmation -> author sees read"
        case .commandReply: "command -> durable reply"
        case .connect: "connect + auth + health.check"
        }
    }

    package var key: String {
        switch self {
        case .messageNew: "message_new"
        case .deliveredSeenByAuthor: "delivered_seen_by_author"
        case .readSeenByAuthor: "read_seen_by_author"
        case .commandReply: "command_reply"
        case .connect: "connect"
        }
    }
}

/// What the harness counts, per second and in total.
package enum Counter: Int, CaseIterable, Sendable, Codable {
    case messagesSent, deliveries, confirmationsSent, confirmationsAccepted, eventsReceived, errors, connectionsOpened,
         slowConsumerDisconnects, unexpectedDisconnects

    package var key: String {
        switch self {
        case .messagesSent: "messages_sent"
        case .deliveries: "deliveries"
        case .confirmationsSent: "confirmations_sent"
        case .confirmationsAccepted: "confirmations_accepted"
        case .eventsReceived: "events_received"
        case .errors: "errors"
        case .connectionsOpened: "connections_opened"
        case .slowConsumerDisconnects: "slow_consumer_disconnects"
        case .unexpectedDisconnects: "unexpected_disconnects"
        }
    }
}
