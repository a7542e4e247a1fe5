import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore

/// Sends the upgrade request, reads the response head, and on a valid 101 replaces itself with a
/// client-role ``WebSocketChannelHandler``; bytes that followed the head go to it untouched.
final class ClientHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let handshake: ClientHandshake
    private let settings: WebSocketSettings
    private let makeApplication: () -> any WebSocketApplication
    private let promise: EventLoopPromise<Void>
    private var received = ByteBuffer()
    private var done = false

    init(handshake: ClientHandshake, settings: WebSocketSettings, promise: EventLoopPromise<Void>,
         makeApplication: @escaping () -> any WebSocketApplication) {
        self.handshake = handshake
        self.settings = settings
        self.promise = promise
        self.makeApplication = makeApplication
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: handshake.requestHead)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        let head: HTTPResponseHead
        do {
            guard let parsed = try HTTPResponseHead.parse(received.readableBytesView) else { return }
            head = parsed
        } catch {
            fail(.handshakeFailed(status: 0, reason: error.description, body: ""), context: context)
            return
        }
        received.moveReaderIndex(forwardBy: head.length)
        let agreement: ClientHandshake.Agreement
        switch handshake.validate(status: head.status, headers: head.headers) {
        case .failure(let failure):
            let body = received.readString(length: min(received.readableBytes, 512)) ?? ""
            fail(.handshakeFailed(status: head.status, reason: failure.description, body: body), context: context)
            return
        case .success(let agreed):
            agreement = agreed
        }
        done = true
        let connection = WebSocketConnection(
            role: .client, limits: settings.limits, compression: agreement.compression,
            compressionConfiguration: handshake.compression, allocator: context.channel.allocator,
            maskingKeys: { WebSocketMaskingKey(UInt32.random(in: .min ... .max)) })
        let handler = WebSocketChannelHandler(
            connection: connection, application: makeApplication(), timeouts: settings.timeouts)
        do {
            try context.pipeline.syncOperations.addHandler(handler, position: .after(self))
        } catch {
            fail(.connectionClosed, context: context)
            return
        }
        promise.succeed()
        if received.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(received)) }
        received = ByteBuffer()
        context.pipeline.syncOperations.removeHandler(self, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            promise.fail(WebSocketClientError.connectionClosed)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            promise.fail(error)
        }
        context.close(promise: nil)
    }

    private func fail(_ error: WebSocketClientError, context: ChannelHandlerContext) {
        done = true
        promise.fail(error)
        context.close(promise: nil)
    }

    typealias InboundOut = ByteBuffer
}
