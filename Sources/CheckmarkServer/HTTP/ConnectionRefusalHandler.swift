import CheckmarkWebSocket
import NIOCore
import NIOHTTP1

/// Answers a connection the listener will not serve with one fixed HTTP response (503 with the
/// JSON error every other refusal has) as soon as it is active, then closes it; whatever the client
/// sends is ignored.
final class ConnectionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: ByteBuffer

    init(_ response: HTTPResponse) {
        var response = response
        response.headers.add("Retry-After", "1")
        self.response = response.closingBytes()
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(response)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}

extension HTTPResponse {
    /// The whole response as HTTP/1.1 bytes with `Connection: close`, for handlers that answer
    /// without the HTTP encoder in front of them (before the decoder, or instead of it).
    func closingBytes() -> ByteBuffer {
        var text = "HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n"
        for field in headers.fields where field.name.lowercased() != "content-length" && field.name.lowercased() != "connection" {
            text += "\(field.name): \(field.value)\r\n"
        }
        text += "Content-Length: \(body.readableBytes)\r\nConnection: close\r\n\r\n"
        var bytes = ByteBuffer(string: text)
        var body = body
        bytes.writeBuffer(&body)
        return bytes
    }
}
