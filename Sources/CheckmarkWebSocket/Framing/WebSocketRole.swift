/// Which end of the connection this codec plays. Clients mask every frame they send; servers never do
/// (RFC 6455 section 5.1), and each side refuses frames that break that rule with 1002.
public enum WebSocketRole: Sendable, Hashable {
    case server
    case client
}
