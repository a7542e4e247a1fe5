import CheckmarkWire

/// Stream's client-side routes that Checkmark does not serve, each with the feature it belongs to:
/// a request for one is answered 501 `not_served` naming the feature, never a bare 404 or 405, so
/// that an app learns at its first call which feature it cannot use here. The routes are those of
/// Stream's client-side API description (GetStream/protocol, `openapi/chat-openapi-clientside.json`
/// at commit e51a64d3) minus ``APIRoute``'s, and those Stream's JavaScript SDK calls that the
/// description lacks.
package struct UnservedStreamRoute: Sendable, Equatable {
    package var method: String
    package var template: String
    /// What the route is for, as the answer names it (e.g. "reactions").
    package var feature: String

    /// The unserved route `method` `path` matches, if any.
    package static func match(method: String, path: String) -> UnservedStreamRoute? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return all.first { route in
            guard route.method == method else { return false }
            let parts = route.template.split(separator: "/")
            return parts.count == segments.count && zip(parts, segments).allSatisfy { part, segment in part.first == "{" || part == segment }
        }
    }

    /// The error a request for this route gets: 501 `not_served`.
    package var error: WireError { .notServed(feature, route: "\(method) \(template)") }

    init(_ method: String, _ template: String, _ feature: String) {
        self.method = method
        self.template = template
        self.feature = feature
    }

    package static let all: [UnservedStreamRoute] = {
        var routes: [UnservedStreamRoute] = []
        func add(_ feature: String, _ pairs: [(String, String)]) {
            routes += pairs.map { UnservedStreamRoute($0.0, $0.1, feature) }
        }
        add("app settings", [("GET", "/app")])
        add("blocklists", [("GET", "/blocklists"), ("POST", "/blocklists"), ("POST", "/blocklists/{id}/import"),
                           ("DELETE", "/blocklists/{name}"), ("PUT", "/blocklists/{name}")])
        add("deleting channels", [("POST", "/channels/delete"), ("DELETE", "/channels/{type}/{id}")])
        add("grouped channel queries", [("POST", "/channels/grouped")])
        add("partial channel updates", [("PATCH", "/channels/{type}/{id}")])
        add("reading a channel by GET", [("GET", "/channels/{type}/{id}")])
        add("drafts", [("DELETE", "/channels/{type}/{id}/draft"), ("GET", "/channels/{type}/{id}/draft"),
                       ("POST", "/channels/{type}/{id}/draft"), ("POST", "/drafts/query")])
        add("uploads", [("DELETE", "/channels/{type}/{id}/file"), ("POST", "/channels/{type}/{id}/file"),
                        ("DELETE", "/channels/{type}/{id}/image"), ("POST", "/channels/{type}/{id}/image"),
                        ("DELETE", "/uploads/file"), ("POST", "/uploads/file"), ("DELETE", "/uploads/image"), ("POST", "/uploads/image")])
        add("hiding channels", [("POST", "/channels/{type}/{id}/hide"), ("POST", "/channels/{type}/{id}/show")])
        add("member updates", [("PATCH", "/channels/{type}/{id}/member"),
                               // Not in the client-side description; both SDKs pin and archive channels with it.
                               ("PATCH", "/channels/{type}/{id}/member/{user_id}")])
        add("reading messages by id", [("GET", "/channels/{type}/{id}/messages")])
        add("pinned messages", [("GET", "/channels/{type}/{id}/pinned_messages")])
        add("truncating channels", [("POST", "/channels/{type}/{id}/truncate")])
        add("push devices", [("DELETE", "/devices"), ("GET", "/devices"), ("POST", "/devices")])
        add("push preferences", [("POST", "/push_preferences")])
        add("guest users", [("POST", "/guest")])
        add("long polling", [("GET", "/longpoll")])
        add("member queries", [("GET", "/members")])
        add("message actions", [("POST", "/messages/{id}/action")])
        // Not in the client-side description, but Stream's JavaScript SDK calls it (`undeleteMessage`).
        add("undeleting messages", [("POST", "/messages/{id}/undelete")])
        add("querying reactions", [("POST", "/messages/{id}/reactions")])
        add("translation", [("POST", "/messages/{id}/translate")])
        add("polls", [("POST", "/messages/{message_id}/polls/{poll_id}/vote"), ("DELETE", "/messages/{message_id}/polls/{poll_id}/vote/{vote_id}"),
                      ("POST", "/polls"), ("PUT", "/polls"), ("POST", "/polls/query"), ("DELETE", "/polls/{poll_id}"),
                      ("GET", "/polls/{poll_id}"), ("PATCH", "/polls/{poll_id}"), ("POST", "/polls/{poll_id}/options"),
                      ("PUT", "/polls/{poll_id}/options"), ("DELETE", "/polls/{poll_id}/options/{option_id}"),
                      ("GET", "/polls/{poll_id}/options/{option_id}"), ("POST", "/polls/{poll_id}/votes")])
        add("reminders", [("DELETE", "/messages/{message_id}/reminders"), ("PATCH", "/messages/{message_id}/reminders"),
                          ("POST", "/messages/{message_id}/reminders"), ("POST", "/reminders/query")])
        add("moderation", [("DELETE", "/moderation/ban"), ("POST", "/moderation/ban"), ("POST", "/moderation/flag"),
                           ("GET", "/moderation/flags/message"), ("POST", "/moderation/mute"), ("POST", "/moderation/mute/channel"),
                           ("POST", "/moderation/unmute"), ("POST", "/moderation/unmute/channel"), ("GET", "/query_banned_users"),
                           ("GET", "/query_future_channel_bans")])
        add("link previews", [("GET", "/og")])
        add("roles", [("GET", "/roles/search")])
        add("search", [("GET", "/search")])
        add("sync", [("POST", "/sync")])
        add("updating threads", [("PATCH", "/threads/{message_id}")])
        add("user groups", [("GET", "/usergroups"), ("POST", "/usergroups"), ("GET", "/usergroups/search"), ("DELETE", "/usergroups/{id}"),
                            ("GET", "/usergroups/{id}"), ("PUT", "/usergroups/{id}"), ("POST", "/usergroups/{id}/members"),
                            ("POST", "/usergroups/{id}/members/delete")])
        add("querying users", [("GET", "/users")])
        add("blocking users", [("GET", "/users/block"), ("POST", "/users/block"), ("POST", "/users/unblock")])
        add("live locations", [("GET", "/users/live_locations"), ("PUT", "/users/live_locations")])
        return routes
    }()
}
