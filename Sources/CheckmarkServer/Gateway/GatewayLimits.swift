import CheckmarkCore

/// Limits of the WebSocket gateway, all configurable (`checkmark serve --help`).
package struct GatewayLimits: Sendable, Hashable {
    /// Open connections per user on this node; one more is closed with 4003. The engine counts them
    /// (the server gives it this limit; the gateway admits each connection against it).
    package var maxConnectionsPerUser: Int
    /// Open connections in total; one more is closed with 4003.
    package var maxConnections: Int
    /// Channels one connection may watch; one more is refused with `too_many_watched_channels`.
    package var maxWatchedChannelsPerConnection: Int
    /// Commands per second a connection may send, on average.
    package var commandsPerSecond: Int
    /// Commands a connection may send at once above the average.
    package var commandBurst: Int
    /// Bytes queued for one connection that it may stay above for at most ``slowConsumerGraceMilliseconds``
    /// before it is disconnected as a slow consumer (4009).
    package var maxOutboundBufferBytes: Int
    /// How long a connection may stay above ``maxOutboundBufferBytes`` (a burst it is catching up on).
    package var slowConsumerGraceMilliseconds: Int
    /// Events one channel resume replays at most; a client further behind gets `channel.resume_failed`
    /// and re-reads the channel's state.
    package var maxResumeEvents: Int
    /// What a client's JSON may hold, on the socket and in REST bodies (`json_max_*`).
    package var json: JSONLimits = .default
    /// Commands of one connection being answered at once; past it the connection's socket is not read
    /// until answers went out (as while its outbound buffer is above the high-water mark), so that a
    /// client sending faster than it reads holds at most this many answers in the server.
    package static let maxCommandsInFlight = 32
    /// Past this many times ``maxOutboundBufferBytes`` a connection is disconnected at once: the bound
    /// on what one client can make the server hold.
    package static let hardOutboundLimitFactor = 8
    /// While a connection is writable it holds less than this (the listener's high-water mark).
    static let channelHighWaterMark = HTTPLimits.writeBufferHighWaterMark

    package init(maxConnectionsPerUser: Int = 64, maxConnections: Int = 100_000, maxWatchedChannelsPerConnection: Int = 1_000,
                commandsPerSecond: Int = 200, commandBurst: Int = 400, maxOutboundBufferBytes: Int = 4 << 20,
                slowConsumerGraceMilliseconds: Int = 5_000, maxResumeEvents: Int = ChannelResume.defaultMaxEvents) {
        self.maxResumeEvents = maxResumeEvents
        self.maxConnectionsPerUser = maxConnectionsPerUser
        self.maxConnections = maxConnections
        self.maxWatchedChannelsPerConnection = maxWatchedChannelsPerConnection
        self.commandsPerSecond = commandsPerSecond
        self.commandBurst = commandBurst
        self.maxOutboundBufferBytes = maxOutboundBufferBytes
        self.slowConsumerGraceMilliseconds = slowConsumerGraceMilliseconds
    }
}
