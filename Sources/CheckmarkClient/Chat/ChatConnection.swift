import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A client of Checkmark's `/connect` gateway (docs/protocol.md): connects as a user, sends commands
/// and awaits their replies, and receives events in the order the server sent them.
public final class ChatConnection: Sendable {
    /// The id the server gave this connection (REST `?connection_id=`).
    public let connectionID: String
    /// The first `health.check`'s `me`: the user with privacy settings and unread counts.
    public let me: JSONValue
    public let userID: String
    private let core: Core

    private init(core: Core, connectionID: String, me: JSONValue, userID: String) {
        self.core = core
        self.connectionID = connectionID
        self.me = me
        self.userID = userID
    }

    /// Connects and waits for the first `health.check`. `resume` names channels to watch at once, each
    /// with the last `channel_seq` seen: the server answers each as a `watch` with `last_seq` whose
    /// reply carries the `request_id` `resume:<cid>` and arrives as an event.
    /// - Throws: ``ChatClientError/refused(code:message:closeCode:)`` when the server sends an error
    ///   event and closes (bad key or token, limits), or the WebSocket layer's errors.
    public static func connect(
        host: String, port: Int, apiKey: String, userID: String, token: String, userDetails: [(String, JSONValue)] = [],
        resume: [(ChannelCID, Int64)] = [], compression: PerMessageDeflateConfiguration = .disabled, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        timeout: TimeAmount = .seconds(10)
    ) async throws -> ChatConnection {
        var json = JSONWriter()
        var fields: [(String, JSONValue)] = [("user_id", .string(userID)), ("user_details", .object([("id", .string(userID))] + userDetails))]
        if !resume.isEmpty { fields.append(("resume", .object(resume.map { ($0.0.description, .number(Double($0.1))) }))) }
        json.value(.object(fields))
        let query = "json=\(percentEncode(String(decoding: json.bytes, as: UTF8.self)))&api_key=\(percentEncode(apiKey))&authorization=\(percentEncode(token))&stream-auth-type=jwt"
        let core = Core()
        try await WebSocketClient.connect(
            to: WebSocketURL(host: host, port: port, target: "/connect?" + query), compression: compression, group: group
        ) { ChatApplication(core: core) }
        guard let first = await core.nextEvent(timeout: timeout) else {
            core.close(code: .normalClosure)
            throw ChatClientError.unexpected("no health.check within \(timeout)")
        }
        switch first {
        case .event("health.check", let json):
            guard let id = json["connection_id"]?.stringValue else { throw ChatClientError.unexpected("health.check without connection_id") }
            return ChatConnection(core: core, connectionID: id, me: json["me"] ?? .null, userID: userID)
        case .event("error", let json):
            let closing = await core.nextEvent(timeout: .seconds(5))
            var code: WebSocketCloseCode?
            if case .closed(let closeCode) = closing { code = closeCode }
            throw ChatClientError.refused(
                code: json["error"]?["error_code"]?.stringValue ?? "unknown", message: json["error"]?["message"]?.stringValue ?? "", closeCode: code)
        case .closed(let code):
            throw ChatClientError.closed(code)
        case .event(let type, _):
            throw ChatClientError.unexpected("first event is \(type), not health.check")
        }
    }

    // MARK: Events

    /// The next event, in the order the server sent them; nil when none comes within `timeout`.
    /// After `.closed`, nil at once.
    public func nextEvent(timeout: TimeAmount = .seconds(5)) async -> ChatEvent? {
        await core.nextEvent(timeout: timeout)
    }

    /// The next event of one of `types`, skipping others; nil when none comes within `timeout`.
    public func nextEvent(ofType types: Set<String>, timeout: TimeAmount = .seconds(5)) async -> ChatEvent? {
        let deadline = NIODeadline.now() + timeout
        while true {
            let left = deadline - .now()
            guard left > .zero, let event = await core.nextEvent(timeout: left) else { return nil }
            if types.contains(event.type) { return event }
            if case .closed = event { return event }
        }
    }

    /// Events already received and not yet taken.
    public var bufferedEventCount: Int { core.bufferedCount }

    // MARK: Requests

    /// Sends one command and waits for its reply's `result`.
    /// - Throws: ``ChatClientError/requestFailed(code:message:httpStatus:)`` for an error reply.
    @discardableResult
    public func request(_ type: String, _ fields: [(String, JSONValue)] = [], timeout: TimeAmount = .seconds(10)) async throws -> JSONValue {
        let id = core.nextRequestID()
        var writer = JSONWriter()
        writer.value(.object([("type", .string(type)), ("request_id", .string(id))] + fields))
        return try await core.request(id: id, text: String(decoding: writer.bytes, as: UTF8.self), timeout: timeout)
    }

    /// Sends raw text without waiting for anything (for tests of bad input).
    public func send(raw text: String) { core.send(text) }

    /// Starts watching; returns the channel state (`read`, `messages`, `watcher_count`). With
    /// `lastSeq`, the last `channel_seq` seen, the missed events follow the reply, then
    /// `channel.resumed` or `channel.resume_failed`.
    @discardableResult
    public func watch(_ cid: ChannelCID, lastSeq: Int64? = nil) async throws -> JSONValue {
        var fields: [(String, JSONValue)] = [("cid", .string(cid.description))]
        if let lastSeq { fields.append(("last_seq", .number(Double(lastSeq)))) }
        return try await request("watch", fields)
    }

    public func stopWatching(_ cid: ChannelCID) async throws {
        try await request("stop_watching", [("cid", .string(cid.description))])
    }

    /// Sends a message; returns it as the server stored it.
    @discardableResult
    public func sendMessage(_ cid: ChannelCID, text: String, id: String? = nil, parentID: String? = nil, silent: Bool = false) async throws -> JSONValue {
        var message: [(String, JSONValue)] = [("text", .string(text)), ("silent", .bool(silent))]
        if let id { message.append(("id", .string(id))) }
        if let parentID { message.append(("parent_id", .string(parentID))) }
        return try await request("send_message", [("cid", .string(cid.description)), ("message", .object(message))])["message"] ?? .null
    }

    public func markRead(_ cid: ChannelCID, messageID: String? = nil) async throws {
        var fields: [(String, JSONValue)] = [("cid", .string(cid.description))]
        if let messageID { fields.append(("message_id", .string(messageID))) }
        try await request("mark_read", fields)
    }

    /// Marks the given channels read (each up to a message, or wholly with nil), or every channel.
    public func markReadMany(_ channels: [(ChannelCID, String?)]? = nil) async throws {
        guard let channels else {
            try await request("mark_read_many")
            return
        }
        try await request("mark_read_many", [("read_by_channel", .object(channels.map { ($0.0.description, $0.1.map(JSONValue.string) ?? .null) }))])
    }

    public func markUnread(_ cid: ChannelCID, messageID: String) async throws {
        try await request("mark_unread", [("cid", .string(cid.description)), ("message_id", .string(messageID))])
    }

    public func markDelivered(_ latest: [(ChannelCID, String)]) async throws {
        try await request("mark_delivered", [("latest_delivered_messages", .array(latest.map {
            .object([("cid", .string($0.0.description)), ("id", .string($0.1))])
        }))])
    }

    public func close() { core.close(code: .normalClosure) }

    /// Percent-encodes a query value (RFC 3986 unreserved characters stay as they are).
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    // MARK: Mechanics

    /// Shared between the connection's event loop and callers: replies waiting, events not yet taken.
    final class Core: Sendable {
        private struct State {
            var session: UnsafeSession?
            var events: [ChatEvent] = []
            var eventWaiter: (id: Int, continuation: CheckedContinuation<ChatEvent?, Never>)?
            var waiterIDs = 0
            var pending: [String: CheckedContinuation<JSONValue, any Error>] = [:]
            var requestIDs = 0
            var closed: WebSocketCloseCode?? = nil
        }

        struct UnsafeSession: @unchecked Sendable {
            let session: WebSocketSession
        }

        private let state = NIOLockedValueBox(State())

        var bufferedCount: Int { state.withLockedValue { $0.events.count } }

        func attach(_ session: WebSocketSession) {
            state.withLockedValue { $0.session = UnsafeSession(session: session) }
        }

        func nextRequestID() -> String {
            state.withLockedValue { state in
                state.requestIDs += 1
                return "r\(state.requestIDs)"
            }
        }

        func send(_ text: String) {
            guard let session = state.withLockedValue({ $0.session }) else { return }
            session.session.eventLoop.execute { session.session.send(text: ByteBuffer(string: text)) }
        }

        func close(code: WebSocketCloseCode) {
            guard let session = state.withLockedValue({ $0.session }) else { return }
            session.session.eventLoop.execute { session.session.close(code: code) }
        }

        func request(id: String, text: String, timeout: TimeAmount) async throws -> JSONValue {
            let loop = state.withLockedValue { $0.session?.session.eventLoop }
            let timer = loop?.scheduleTask(in: timeout) { [self] in
                let waiting = state.withLockedValue { $0.pending.removeValue(forKey: id) }
                waiting?.resume(throwing: ChatClientError.unexpected("no reply to \(id) within \(timeout)"))
            }
            defer { timer?.cancel() }
            return try await withCheckedThrowingContinuation { continuation in
                let closed = state.withLockedValue { state -> WebSocketCloseCode?? in
                    if state.closed == nil { state.pending[id] = continuation }
                    return state.closed
                }
                if let closed {
                    continuation.resume(throwing: ChatClientError.closed(closed))
                    return
                }
                send(text)
            }
        }

        func nextEvent(timeout: TimeAmount) async -> ChatEvent? {
            let loop = state.withLockedValue { $0.session?.session.eventLoop }
            return await withCheckedContinuation { continuation in
                let immediate: ChatEvent?? = state.withLockedValue { state in
                    if !state.events.isEmpty { return .some(state.events.removeFirst()) }
                    if state.closed != nil { return .some(nil) }
                    state.waiterIDs += 1
                    state.eventWaiter = (state.waiterIDs, continuation)
                    return .none
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                    return
                }
                let id = state.withLockedValue { $0.waiterIDs }
                let fire: @Sendable () -> Void = { [self] in
                    let waiter = state.withLockedValue { state -> CheckedContinuation<ChatEvent?, Never>? in
                        guard let waiter = state.eventWaiter, waiter.id == id else { return nil }
                        state.eventWaiter = nil
                        return waiter.continuation
                    }
                    waiter?.resume(returning: nil)
                }
                if let loop {
                    loop.scheduleTask(in: timeout, fire)
                } else {
                    MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: timeout, fire)
                }
            }
        }

        /// Called on the loop for each text message.
        func received(_ text: ByteBuffer) {
            guard let json = try? JSONParser.parse(text.readableBytesView, limits: .stored) else {
                deliver(.event(type: "client.unparsable", json: .string(String(buffer: text))))
                return
            }
            let type = json["type"]?.stringValue ?? ""
            if let requestID = json["request_id"]?.stringValue, type == "reply" || type == "error" {
                let waiting = state.withLockedValue { $0.pending.removeValue(forKey: requestID) }
                if let waiting {
                    if type == "reply" {
                        waiting.resume(returning: json["result"] ?? .null)
                    } else {
                        let error = json["error"]
                        waiting.resume(throwing: ChatClientError.requestFailed(
                            code: error?["error_code"]?.stringValue ?? "unknown", message: error?["message"]?.stringValue ?? "",
                            httpStatus: error?["StatusCode"]?.intValue ?? 0))
                    }
                    return
                }
            }
            deliver(.event(type: type, json: json))
        }

        /// The connection ended: pending requests fail, and `.closed` is the last event. Marking the
        /// connection closed and queueing that event happen under one lock, so that `nextEvent` never
        /// sees it closed with the event not queued yet (it would answer nil instead of `.closed`).
        func disconnected(_ code: WebSocketCloseCode?) {
            let (pending, waiter) = state.withLockedValue { state in
                state.closed = .some(code)
                defer { state.pending = [:] }
                var waiter: CheckedContinuation<ChatEvent?, Never>?
                if let waiting = state.eventWaiter {
                    state.eventWaiter = nil
                    waiter = waiting.continuation
                } else {
                    state.events.append(.closed(code))
                }
                return (Array(state.pending.values), waiter)
            }
            for waiting in pending { waiting.resume(throwing: ChatClientError.closed(code)) }
            waiter?.resume(returning: .closed(code))
        }

        private func deliver(_ event: ChatEvent) {
            let waiter = state.withLockedValue { state -> CheckedContinuation<ChatEvent?, Never>? in
                if let waiter = state.eventWaiter {
                    state.eventWaiter = nil
                    return waiter.continuation
                }
                state.events.append(event)
                return nil
            }
            waiter?.resume(returning: event)
        }
    }
}

/// The WebSocket application behind a ``ChatConnection``.
final class ChatApplication: WebSocketApplication {
    let core: ChatConnection.Core
    init(core: ChatConnection.Core) { self.core = core }
    func connected(_ session: WebSocketSession) { core.attach(session) }
    func received(_ message: WebSocketMessage, on session: WebSocketSession) {
        if case .text(let text) = message { core.received(text) }
    }
    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) { core.disconnected(code) }
}
