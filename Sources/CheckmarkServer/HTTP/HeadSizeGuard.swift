import NIOCore

/// Sits in front of the HTTP decoder and counts the bytes of the request head in progress; past
/// ``HTTPLimits/maxHeadSize`` it answers 431 (the JSON error of ``HTTPRoutes/refusal(status:message:)``),
/// reports the refusal once, and closes. The HTTP handler calls ``headCompleted()``.
final class HeadSizeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limit: Int
    private let routes: (any HTTPRoutes)?
    private var count = 0
    private var counting = true
    private var refused = false

    init(limit: Int, routes: (any HTTPRoutes)? = nil) {
        self.limit = limit
        self.routes = routes
    }

    /// The head is parsed: bytes from here on are body or the next request.
    func headCompleted() { counting = false }
    /// Whether a byte of the request head in progress has arrived (false for a connection idle
    /// between requests).
    var headStarted: Bool { count > 0 }
    /// A new request begins.
    func requestCompleted() {
        count = 0
        counting = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let bytes = unwrapInboundIn(data)
        if counting {
            count += bytes.readableBytes
            if count > limit {
                refused = true
                let message = "request head larger than \(limit) bytes"
                routes?.refused(status: 431, message: message, peer: context.channel.peerDescription)
                let response = routes?.refusal(status: 431, message: message) ?? .text(431, message)
                context.writeAndFlush(wrapOutboundOut(response.closingBytes())).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
                return
            }
        }
        context.fireChannelRead(data)
    }
}
