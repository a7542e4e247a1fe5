import CheckmarkAuth
import CheckmarkClient
import CheckmarkCore
import NIOCore

/// `checkmark demo`'s scripted first session against a running server, through the public API only
/// (REST with the server token for setup, `/connect` for the two users): Ana sends Ben two messages
/// in a channel whose type has read and delivery events on. Ben's client confirms delivery of each
/// and then reads it; before the second, Ben turns his read receipts off with his own token. Ana's
/// client follows each message's check with ``ReceiptTracker`` from the events it receives.
///
/// Expected: the first message goes sent → delivered → read; the second sent → delivered and stays
/// there. Any other outcome is reported as it happened (`Step.state`), not hidden.
package struct FirstSession: Sendable {
    /// What Ana's client showed for one message at one moment.
    package struct Step: Sendable, Equatable {
        package var text: String
        package var state: MessageStatus.State
        /// The server's time of the change (`created_at`, `last_delivered_at` or the reader's `last_read`).
        package var at: String
        /// Who it was delivered to or read by; empty for `.sent`.
        package var by: [String]
        /// True for the last step of a message whose read was expected but did not come (private reader).
        package var readWithheld: Bool
    }

    package let host: String
    package let port: Int
    package let apiKey: String
    package let apiSecret: String
    /// The channel the session creates (`receipts:<channelID>`); a fresh one per run on a shared server.
    package let channelID: String
    /// How long Ana waits for each event before deciding it will not come.
    package let patience: TimeAmount

    package init(host: String, port: Int, apiKey: String, apiSecret: String, channelID: String, patience: TimeAmount = .seconds(1)) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
        self.apiSecret = apiSecret
        self.channelID = channelID
        self.patience = patience
    }

    /// The channel type the session uses: Stream's `messaging` sends no delivery events, this one does.
    package static let channelType = "receipts"
    package static let texts = ["hello Ben", "are you there?"]

    /// Runs the session, calling `show` with each step as it happens.
    /// - Throws: ``BenchHTTPClient/Failure`` when setup is refused, ``ChatClientError`` when a
    ///   connection or command fails, ``ChatClientError/unexpected(_:)`` when an event that must come
    ///   (Ben's `message.new`, Ana's `message.delivered`) does not within ``patience`` times five.
    package func run(show: @Sendable (Step) -> Void) async throws -> [Step] {
        let http = BenchHTTPClient(host: host, port: port, apiKey: apiKey, apiSecret: apiSecret)
        let cid = ChannelCID(type: Self.channelType, id: channelID)
        try await http.call("POST", "/users", body: .object([("users", .object(["ana": "Ana", "ben": "Ben"].sorted(by: <).map { id, name in
            (id, .object([("id", .string(id)), ("name", .string(name)), ("privacy_settings", Self.privacy(readReceipts: true))]))
        }))]))
        let channelType: JSONValue = .object([("name", .string(Self.channelType)), ("read_events", .bool(true)), ("delivery_events", .bool(true))])
        do { try await http.call("POST", "/channeltypes", body: channelType) } catch {
            // It exists already (a second run on the same server): make sure it sends both kinds of event.
            try await http.call("PUT", "/channeltypes/\(Self.channelType)", body: .object([("read_events", .bool(true)), ("delivery_events", .bool(true))]))
        }
        try await http.call("POST", "/channels/\(cid.type)/\(cid.id)/query", body: .object([("data", .object([
            ("members", .array([.string("ana"), .string("ben")])), ("created_by_id", .string("ana")),
        ]))]))

        let ana = try await connect("ana")
        let ben = try await connect("ben")
        defer {
            ana.close()
            ben.close()
        }
        var tracker = ReceiptTracker(cid: cid, channelState: try await ana.watch(cid))
        _ = try await ben.watch(cid)

        var steps: [Step] = []
        func record(_ step: Step) {
            steps.append(step)
            show(step)
        }
        for (index, text) in Self.texts.enumerated() {
            let message = try await ana.sendMessage(cid, text: text)
            guard let id = message["id"]?.stringValue, let createdAt = message["created_at"]?.stringValue else {
                throw ChatClientError.unexpected("send_message answered without the message's id and created_at")
            }
            record(Step(text: text, state: .sent, at: createdAt, by: [], readWithheld: false))

            // Ben's client received it and says so.
            guard await ben.nextEvent(ofType: ["message.new"], timeout: patience * 5) != nil else {
                throw ChatClientError.unexpected("Ben never received \"\(text)\"")
            }
            try await ben.markDelivered([(cid, id)])
            guard let delivered = await ana.nextEvent(ofType: ["message.delivered"], timeout: patience * 5) else {
                throw ChatClientError.unexpected("Ana never learnt that \"\(text)\" reached Ben")
            }
            tracker.apply(delivered)
            record(step(text, message, tracker, at: delivered.json?["last_delivered_at"]?.stringValue, withheld: false))

            // Ben opens the channel.
            try await ben.markRead(cid)
            if let read = await ana.nextEvent(ofType: ["message.read"], timeout: patience) {
                tracker.apply(read)
                record(step(text, message, tracker, at: read.json?["created_at"]?.stringValue, withheld: false))
            } else {
                record(step(text, message, tracker, at: nil, withheld: true))
            }

            if index == 0 {
                // Ben's app: "don't show when I read", with Ben's own token, from now on.
                let token = JWT.sign(claims: .object([("user_id", .string("ben"))]), secret: apiSecret)
                try await http.call("PATCH", "/users", body: .object([("users", .array([.object([
                    ("id", .string("ben")), ("set", .object([("privacy_settings", Self.privacy(readReceipts: false))])),
                ])]))]), token: token)
            }
        }
        return steps
    }

    private func step(_ text: String, _ message: JSONValue, _ tracker: ReceiptTracker, at: String?, withheld: Bool) -> Step {
        let status = tracker.status(of: message)
        let state = status?.state ?? .sent
        return Step(text: text, state: state, at: at ?? "", by: (state == .read ? status?.readBy : status?.deliveredTo) ?? [],
                    readWithheld: withheld)
    }

    private func connect(_ user: String) async throws -> ChatConnection {
        try await ChatConnection.connect(
            host: host, port: port, apiKey: apiKey, userID: user,
            token: JWT.sign(claims: .object([("user_id", .string(user))]), secret: apiSecret))
    }

    private static func privacy(readReceipts: Bool) -> JSONValue {
        .object([("read_receipts", .object([("enabled", .bool(readReceipts))])), ("delivery_receipts", .object([("enabled", .bool(true))]))])
    }
}
