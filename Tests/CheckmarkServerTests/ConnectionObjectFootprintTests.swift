import CheckmarkWebSocket
import CheckmarkWebSocketNIO
@testable import CheckmarkServer
import NIOCore
import Testing

#if canImport(Glibc)
/// glibc's `malloc_usable_size` (in `malloc.h`, which the Glibc module does not export): the bytes of
/// the block `malloc` gave for `pointer`, less its 8-byte header.
@_silgen_name("malloc_usable_size")
private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int
#endif

/// What every open connection's objects cost the allocator: their fields are ordered so that narrow
/// ones share padding, and the bounds are the allocator's block sizes (glibc's blocks grow in steps of
/// 16 bytes), so a field that costs every connection another block fails here.
@Suite("Per-connection objects' footprint")
struct ConnectionObjectFootprintTests {
    final class Quiet: WebSocketApplication {
        func connected(_ session: WebSocketSession) {}
        func received(_ message: WebSocketMessage, on session: WebSocketSession) {}
        func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {}
    }

    @Test func timeoutsTakeThreeWords() {
        #expect(MemoryLayout<WebSocketTimeouts>.size == 24, "\(MemoryLayout<WebSocketTimeouts>.size) bytes (33 with optional amounts)")
    }

    #if canImport(Glibc)
    @Test func aChannelHandlerFitsA304ByteBlock() {
        let handler = WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: Quiet(), timeouts: WebSocketTimeouts())
        let usable = mallocUsableSize(Unmanaged.passUnretained(handler).toOpaque())
        #expect(usable <= 296, "\(usable) usable bytes (328 with a session object of its own and optional timeouts)")
    }
    #endif

    @Test func aTimeoutsRoundTripsNoneAndEveryAmount() {
        var timeouts = WebSocketTimeouts(closeTimeout: .seconds(1), keepaliveInterval: nil, idleTimeout: .milliseconds(7))
        #expect(timeouts.keepaliveInterval == nil && timeouts.idleTimeout == .milliseconds(7))
        timeouts.keepaliveInterval = .nanoseconds(-5)
        timeouts.idleTimeout = nil
        #expect(timeouts.keepaliveInterval == .nanoseconds(-5) && timeouts.idleTimeout == nil)
        // The one amount that cannot be kept (it marks none) is kept as the nearest one.
        timeouts.idleTimeout = .nanoseconds(.min)
        #expect(timeouts.idleTimeout == .nanoseconds(.min + 1))
    }

    /// The gateway connection holds its session inline, then a byte, a timer and a deadline: at 137
    /// bytes the session leaves the connection at 248 bytes, a 256-byte block (288 before: the slot's
    /// user id kept apart from the state, counters in whole words). Only the session is checked here:
    /// a gateway connection needs a running service to exist.
    @Test func aGatewaySessionStaysWithin137Bytes() {
        #expect(MemoryLayout<GatewaySession>.size <= 137, "\(MemoryLayout<GatewaySession>.size) bytes (165 before the packing)")
    }
}
