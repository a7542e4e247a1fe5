import CheckmarkCore
import CheckmarkWire
import NIOCore

/// Typing and custom events: sent to the channel's watchers, never stored.
extension RESTAPI {
    /// `POST /channels/{type}/{id}/event`: `{"event": {type, parent_id?, custom?, ...}}`, the sender
    /// the token's user, or for a server token `event.user` / `user_id`. Answers 201 `{"event": ...}`,
    /// the event as its recipients get it, also when the sender's privacy or the channel type keeps it
    /// from everyone (``ChannelSignals``). The sending connection (`?connection_id=`, as Stream's SDKs
    /// send it) ends its typing when it closes.
    /// - Throws: 400 (``RequestFields/signal(_:maxCustomBytes:)``), 403 not a member or custom events
    ///   off, 404 unknown channel or user, 429 past `channel_events_per_second` for the user (all its
    ///   connections together; server tokens are not limited).
    func sendEvent(_ call: Call) throws(WireError) -> EventLoopFuture<[UInt8]> {
        let cid = try call.cid()
        guard let event = call.body["event"], case .object = event else { throw .invalid("event is required: an object with a type") }
        var named = try RESTCaller.named(in: event)
        if named == nil { named = try RESTCaller.named(in: call.body, query: call.query) }
        let sender = try call.caller.requiredActor(named: named)
        let signal = try RequestFields.signal(event, maxCustomBytes: maxCustomEventBytes)
        let connectionID = try call.connectionID()
        // Per user, not per the connection id the request names: a client could name a new one each time.
        if case .user = call.caller, !eventRateLimiter.admit(key: sender) {
            throw .rateLimited("more than \(eventRateLimiter.rate) typing or custom events a second from one user (channel_events_per_second); slow down")
        }
        return service.send(signal, from: sender, in: cid, connectionID: connectionID).map { json in
            var w = JSONWriter(capacity: json.count + 16)
            w.beginObject()
            w.key("event")
            w.raw(json)
            w.endObject()
            return w.bytes
        }
    }
}
