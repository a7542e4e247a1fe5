import CheckmarkCore
import CheckmarkWebSocket

/// Something the server sent that was not the reply to a request: an event (`message.new`,
/// `message.read`, `health.check`, ...), or the end of the connection.
public enum ChatEvent: Sendable {
    case event(type: String, json: JSONValue)
    /// The connection ended, with the server's close code (nil when none came).
    case closed(WebSocketCloseCode?)

    /// The event type, or `connection.closed`.
    public var type: String {
        switch self {
        case .event(let type, _): type
        case .closed: "connection.closed"
        }
    }

    /// The event's JSON (nil for `.closed`).
    public var json: JSONValue? {
        if case .event(_, let json) = self { return json }
        return nil
    }

    /// The channel the event is about, if any.
    public var cid: ChannelCID? {
        json?["cid"]?.stringValue.flatMap(ChannelCID.init)
    }
}
