import NIOCore

/// Sits in front of the HTTP decoder and counts the bytes of the request head in progress; past
/// ``HTTPLimits/maxHeadSize`` it answers 431 and closes. The HTTP handler calls ``headCompleted()``.
final class HeadSizeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limit: Int
    private var count = 0
    private var counting = true
    private var refused = false

    init(limit: Int) { self.limit = limit }

    /// The head is parsed: bytes from here on are body or the next request.
    func headCompleted() { counting = false }
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
                let body = "request head larger than \(limit) bytes\n"
                let response = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
                    context.close(promise: nil)
                }
                return
            }
        }
        context.fireChannelRead(data)
    }
}
