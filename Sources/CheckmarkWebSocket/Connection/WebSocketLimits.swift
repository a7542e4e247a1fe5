/// Size and count limits enforced by the codec. Each breach closes the connection with 1009.
public struct WebSocketLimits: Sendable, Hashable {
    /// Largest payload of a single frame, in bytes. Checked as soon as the frame header arrives.
    public var maxFrameSize: Int
    /// Largest message after reassembly and decompression, in bytes.
    public var maxMessageSize: Int
    /// Most frames one message may be split into.
    public var maxFragmentsPerMessage: Int

    public init(maxFrameSize: Int = 16 << 20, maxMessageSize: Int = 16 << 20, maxFragmentsPerMessage: Int = 65_536) {
        self.maxFrameSize = maxFrameSize
        self.maxMessageSize = maxMessageSize
        self.maxFragmentsPerMessage = maxFragmentsPerMessage
    }

    /// Defaults: 16 MiB frames and messages, 65,536 fragments (Autobahn 9.3.1 sends 4 MiB in 64-byte fragments).
    public static let `default` = WebSocketLimits()
}
