/// A frame opcode (RFC 6455 section 5.2). Values 3-7 and 11-15 are reserved and never reach this type:
/// the parser refuses them with 1002.
public enum WebSocketOpcode: UInt8, Sendable, Hashable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) may not be fragmented and carry at most 125 bytes (section 5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
