import NIOCore

/// What every connection of one endpoint has in common: its role, limits, local compression
/// settings, allocator and (clients) source of masking keys. A server makes one for all of its
/// connections, which hold a reference to it instead of a copy each (an idle connection's bytes).
public final class WebSocketConnectionSettings: Sendable {
    public let role: WebSocketRole
    public let limits: WebSocketLimits
    /// Local settings (threshold, level, window) for sending compressed messages.
    public let compressionConfiguration: PerMessageDeflateConfiguration
    public let allocator: ByteBufferAllocator
    /// Fresh masking keys for a client; nil for a server.
    let makeMaskingKey: (@Sendable () -> WebSocketMaskingKey)?

    /// - Parameters:
    ///   - role: server or client; a client must pass `maskingKeys`, a source of fresh random keys.
    ///   - compressionConfiguration: local settings (threshold, level, window) for sending.
    public init(
        role: WebSocketRole, limits: WebSocketLimits = .default,
        compressionConfiguration: PerMessageDeflateConfiguration = .init(),
        allocator: ByteBufferAllocator = .init(),
        maskingKeys: (@Sendable () -> WebSocketMaskingKey)? = nil
    ) {
        precondition(role == .server || maskingKeys != nil, "a client needs a source of masking keys")
        self.role = role
        self.limits = limits
        self.compressionConfiguration = compressionConfiguration
        self.allocator = allocator
        self.makeMaskingKey = role == .client ? maskingKeys : nil
    }
}
