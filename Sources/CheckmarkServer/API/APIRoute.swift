/// Every HTTP route Checkmark serves, with its method and path template. `docs/openapi.json`
/// documents exactly these (a test compares the two), and request dispatch goes through ``match(method:path:)``.
package enum APIRoute: String, CaseIterable, Sendable {
    // Operations and the WebSocket gateway.
    case connect, healthz, readyz, metrics
    // Users.
    case upsertUsers, updateUsersPartial
    // Channel types.
    case createChannelType, listChannelTypes, getChannelType, updateChannelType
    // Channels. Literal segments come before `{id}` so that `/channels/{type}/query` is not an update.
    case queryChannels, queryChannelsByGet, markAllRead, markDelivered, queryDistinctChannel, queryChannel, updateChannel
    // Messages and confirmations in a channel.
    case sendMessage, markRead, markUnread, stopWatching, messageReceipts, sendEvent
    // Messages and threads.
    case getMessage, updateMessage, updateMessagePartial, deleteMessage, replies, queryThreads, getThread
    // Reactions.
    case sendReaction, deleteReaction, getReactions
    // Unread counts.
    case unreadCounts

    package var method: String {
        switch self {
        case .connect, .healthz, .readyz, .metrics, .listChannelTypes, .queryChannelsByGet, .getChannelType, .messageReceipts, .unreadCounts, .replies, .getMessage, .getThread, .getReactions: "GET"
        case .updateUsersPartial: "PATCH"
        case .updateChannelType, .updateMessagePartial: "PUT"
        case .deleteMessage, .deleteReaction: "DELETE"
        default: "POST"
        }
    }

    /// The path with `{name}` placeholders, as in the OpenAPI document.
    package var template: String {
        switch self {
        case .connect: "/connect"
        case .healthz: "/healthz"
        case .readyz: "/readyz"
        case .metrics: "/metrics"
        case .upsertUsers, .updateUsersPartial: "/users"
        case .createChannelType, .listChannelTypes: "/channeltypes"
        case .getChannelType, .updateChannelType: "/channeltypes/{name}"
        case .queryChannels, .queryChannelsByGet: "/channels"
        case .markAllRead: "/channels/read"
        case .markDelivered: "/channels/delivered"
        case .queryDistinctChannel: "/channels/{type}/query"
        case .queryChannel: "/channels/{type}/{id}/query"
        case .updateChannel: "/channels/{type}/{id}"
        case .sendMessage: "/channels/{type}/{id}/message"
        case .markRead: "/channels/{type}/{id}/read"
        case .markUnread: "/channels/{type}/{id}/unread"
        case .stopWatching: "/channels/{type}/{id}/stop-watching"
        case .getMessage, .updateMessage, .updateMessagePartial, .deleteMessage: "/messages/{id}"
        case .replies: "/messages/{parent_id}/replies"
        case .queryThreads: "/threads"
        case .getThread: "/threads/{message_id}"
        case .sendReaction: "/messages/{id}/reaction"
        case .deleteReaction: "/messages/{id}/reaction/{type}"
        case .getReactions: "/messages/{id}/reactions"
        case .messageReceipts: "/channels/{type}/{id}/messages/{message_id}/receipts"
        case .sendEvent: "/channels/{type}/{id}/event"
        case .unreadCounts: "/unread"
        }
    }

    /// The status of a successful answer: 201 for what Stream's description answers with 201
    /// (`SendEvent`, `SendReaction`), 200 otherwise.
    package var successStatus: Int {
        switch self {
        case .sendEvent, .sendReaction: 201
        case .connect, .healthz, .readyz, .metrics, .upsertUsers, .updateUsersPartial, .createChannelType, .listChannelTypes,
             .getChannelType, .updateChannelType, .queryChannels, .queryChannelsByGet, .markAllRead, .markDelivered, .queryDistinctChannel,
             .queryChannel, .updateChannel, .sendMessage, .markRead, .markUnread, .stopWatching, .messageReceipts, .replies,
             .getMessage, .updateMessage, .updateMessagePartial, .deleteMessage, .queryThreads, .getThread, .unreadCounts,
             .deleteReaction, .getReactions:
            200
        }
    }

    /// The outcome of matching a request line against the routes.
    package enum Match: Sendable, Equatable {
        /// The route, with the placeholder values taken from the path (percent-decoded).
        case found(APIRoute, parameters: [String: String])
        /// The path exists but not with this method: 405, with these methods in `Allow`.
        case wrongMethod(allowed: [String])
        case notFound
    }

    /// The first route (in declaration order) whose template fits `path`; a trailing slash is ignored.
    package static func match(method: String, path: String) -> Match {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map { HTTPRequest.percentDecode(String($0)) }
        var allowed: [String] = []
        for route in allCases {
            guard let parameters = route.parameters(of: segments) else { continue }
            if route.method == method { return .found(route, parameters: parameters) }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        return allowed.isEmpty ? .notFound : .wrongMethod(allowed: allowed)
    }

    private func parameters(of segments: [String]) -> [String: String]? {
        let parts = template.split(separator: "/")
        guard parts.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (part, segment) in zip(parts, segments) {
            if part.first == "{" {
                // A literal of another route at this place belongs to that route (declared earlier).
                parameters[String(part.dropFirst().dropLast())] = segment
            } else if part != segment {
                return nil
            }
        }
        return parameters
    }
}
