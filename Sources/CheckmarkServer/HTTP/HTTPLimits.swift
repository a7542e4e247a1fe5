import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Limits on the HTTP side of the listener.
package struct HTTPLimits: Sendable, Hashable {
    /// Largest request head (request line and headers) in bytes; 431 past it.
    package var maxHeadSize: Int
    /// Largest request body in bytes; 413 past it.
    package var maxBodySize: Int
    /// Time allowed for a whole request (head and body) to arrive, and the idle time allowed between
    /// keep-alive requests; 408 and close past it (the slowloris guard).
    package var headTimeout: TimeAmount
    /// HTTP connections open at once that have not become WebSocket connections (requests being
    /// read, keep-alive connections between requests); past it a new connection is answered 503 and
    /// closed, so that clients that never finish a request cannot take every descriptor.
    package var maxPendingConnections: Int

    /// Each connection's write buffer water marks: above `high` bytes queued the channel reports
    /// itself not writable (and the gateway starts measuring a slow consumer), below `low` writable again.
    package static let writeBufferLowWaterMark = 32 * 1024
    /// Body bytes read and dropped after a 413 before the connection is closed anyway.
    package static let maxLingerBytes = 64 << 20
    package static let writeBufferHighWaterMark = 64 * 1024
    /// The first read of a connection asks for this many bytes; later reads grow (up to 64 KiB) while
    /// reads fill the buffer, and shrink when they do not. NIO keeps each connection's last receive
    /// buffer for its next read, so this is also what an idle connection holds (NIO's default, 2 KiB,
    /// was a third of an idle connection's memory). Measured with `checkmark bench connect`: at 128 an
    /// idle connection holds about 100 bytes less than at 256 (each keeps a 128-byte buffer, though
    /// the upgrade request is longer), at 64 about 100 bytes more.
    package static let initialReceiveBufferBytes = 128
    /// Reads of one connection per readiness event. At 1 NIO keeps one receive buffer per connection;
    /// at more it keeps a pool of up to that many once a read's buffer is still held when the next read
    /// comes (as during the HTTP upgrade): a 16-slot pool and its buffers were about 1 KiB of every
    /// idle connection. Inbound traffic is commands and confirmations; a larger message still arrives
    /// in reads of up to 64 KiB, one per readiness event (the poller is level-triggered, so nothing
    /// waits).
    package static let readsPerReadinessEvent: UInt = 1

    /// Pipelined request parts held while an earlier request is answered, in bytes; past it the
    /// connection is closed (a client may pipeline, not flood).
    package var maxPipelinedBytes: Int

    /// How long the listener stops accepting after accept failed for want of descriptors or memory
    /// (EMFILE, ENFILE, ENOBUFS, ENOMEM); the connections wait in the backlog meanwhile.
    package var acceptBackoff: TimeAmount

    /// Whether an accept error is the process or the system running out of descriptors or memory
    /// (worth pausing for), rather than one connection's failure (ECONNABORTED: accept the next).
    static func isResourceExhaustion(_ error: IOError) -> Bool {
        [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errnoCode)
    }

    package init(maxHeadSize: Int = 16 * 1024, maxBodySize: Int = 1 << 20, headTimeout: TimeAmount = .seconds(10),
                maxPendingConnections: Int = 4_096, maxPipelinedBytes: Int = 2 << 20, acceptBackoff: TimeAmount = .seconds(1)) {
        self.maxHeadSize = maxHeadSize
        self.maxBodySize = maxBodySize
        self.headTimeout = headTimeout
        self.maxPendingConnections = maxPendingConnections
        self.maxPipelinedBytes = maxPipelinedBytes
        self.acceptBackoff = acceptBackoff
    }
}
