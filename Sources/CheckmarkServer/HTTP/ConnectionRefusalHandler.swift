import NIOCore

/// Answers a connection the listener will not serve with one fixed HTTP response (503 with a JSON
/// error) as soon as it is active, then closes it; whatever the client sends is ignored.
final class ConnectionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: String

    init(status: Int, reason: String, message: String) {
        let body = #"{"code":-1,"message":"\#(message)","StatusCode":\#(status),"duration":"0.00ms"}"#
        response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\nRetry-After: 1\r\n\r\n\(body)"
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
