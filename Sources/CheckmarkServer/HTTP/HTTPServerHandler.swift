import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOHTTP1

/// Reads HTTP/1.1 requests (parsed by NIOHTTP1), answers them through ``HTTPRoutes``, and performs the
/// WebSocket upgrade: the pure ``ServerHandshake`` decides, this handler writes the 101 and replaces
/// the HTTP handlers by a ``WebSocketChannelHandler``. Bytes that arrived behind the upgrade request
/// are handed to the WebSocket handler untouched.
///
/// Pipelined requests are answered one after the other, in order: parts of a request that arrive
/// while an earlier one is being answered wait (reading pauses) and are taken up once its answer is
/// written, an upgrade included. A whole request must arrive within ``HTTPLimits/headTimeout`` (408);
/// a request the parser cannot frame (bad `Transfer-Encoding`, not HTTP) is answered 400 and closed,
/// in its turn when it was pipelined behind requests still being answered. A peer that resets or
/// leaves in the middle of a request is simply closed (nobody to answer). Every refusal made here is
/// reported to ``HTTPRoutes/refused(status:message:peer:)`` once, with the peer's address.
final class HTTPServerHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private enum State {
        case idle
        case receiving(HTTPRequest, upgrade: Bool)
        /// Answered 413; the rest of the body is read and dropped (lingering close) so that the peer
        /// (a client, or a proxy such as nginx still sending) reads the answer instead of a reset.
        case tooLarge(discarded: Int)
        case responding
        case upgraded
    }

    private let routes: any HTTPRoutes
    private let handshake: ServerHandshake
    private let limits: HTTPLimits
    private let webSocket: WebSocketSettings
    /// What the listener's WebSocket connections share (one for the listener, not a copy each).
    private let connectionSettings: WebSocketConnectionSettings
    private let headGuard: HeadSizeGuard
    private let pending: PendingConnections
    private var state: State = .idle
    /// What waits behind the answer in progress: parts of pipelined requests, in order, and after
    /// them at most one framing error of the parser (answered 400 in its turn).
    private enum Waiting {
        case part(HTTPServerRequestPart)
        case malformed(String)
    }
    private var queued: [Waiting] = []
    private var queuedBytes = 0
    /// A 400 for bad framing is written or waits its turn: what the decoder reports after it is a
    /// consequence, not a new refusal.
    private var failedFraming = false
    private var headTimer: Scheduled<Void>?
    private var keepAlive = true
    /// Whether a request was answered and the connection kept open for the next.
    private var answeredOne = false
    /// Lingering close after a 413: the answer is written, and the request's end arrived.
    private var tooLargeAnswered = false
    private var tooLargeEnded = false

    init(routes: any HTTPRoutes, handshake: ServerHandshake, limits: HTTPLimits, webSocket: WebSocketSettings,
         connectionSettings: WebSocketConnectionSettings, headGuard: HeadSizeGuard,
         pending: PendingConnections) {
        self.connectionSettings = connectionSettings
        self.pending = pending
        self.routes = routes
        self.handshake = handshake
        self.limits = limits
        self.webSocket = webSocket
        self.headGuard = headGuard
    }

    func handlerAdded(context: ChannelHandlerContext) {
        armHeadTimer(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        headTimer?.cancel()
        // Upgraded or closed: no longer a pending HTTP connection.
        pending.release()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .upgraded = state {
            // Leftover bytes forwarded by the HTTP decoder while it is removed: they are WebSocket frames.
            context.fireChannelRead(data)
            return
        }
        let part = unwrapInboundIn(data)
        if case .responding = state {
            hold(part, context: context)
        } else if !queued.isEmpty {
            hold(part, context: context)  // behind what waits already, in order
        } else {
            handle(part, context: context)
        }
    }

    /// Keeps a part of a pipelined request until the answer in progress is written; reading pauses
    /// meanwhile (backpressure), and a client holding more than ``HTTPLimits/maxPipelinedBytes`` is closed.
    private func hold(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        queued.append(.part(part))
        queuedBytes += Self.weight(part)
        if queuedBytes > limits.maxPipelinedBytes {
            routes.refused(status: 400, message: "more than \(limits.maxPipelinedBytes) bytes pipelined (max_pipelined_bytes)", peer: peer(context))
            context.close(promise: nil)
            return
        }
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
    }

    /// Takes up the pipelined parts that waited, until one of them starts an answer again.
    private func resumeQueued(context: ChannelHandlerContext) {
        context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        while !queued.isEmpty {
            switch state {
            case .responding, .upgraded: return
            default: break
            }
            switch queued.removeFirst() {
            case .part(let part):
                queuedBytes -= Self.weight(part)
                handle(part, context: context)
            case .malformed(let message):
                refuseMalformed(message, context: context)
            }
        }
        if queued.isEmpty { queuedBytes = 0 }
    }

    /// What a held part counts against ``HTTPLimits/maxPipelinedBytes``.
    private static func weight(_ part: HTTPServerRequestPart) -> Int {
        if case .body(let chunk) = part { return chunk.readableBytes }
        return 256
    }

    private func peer(_ context: ChannelHandlerContext) -> String {
        context.channel.peerDescription
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            headGuard.headCompleted()
            keepAlive = head.isKeepAlive
            var headers = HTTPHeaderList()
            for (name, value) in head.headers { headers.add(name, value) }
            var request = HTTPRequest(
                method: head.method.rawValue, uri: head.uri, versionMajor: head.version.major,
                versionMinor: head.version.minor, headers: headers)
            request.peer = peer(context)
            let wantsUpgrade = !headers.values("Upgrade").isEmpty || routes.isWebSocketPath(request.path)
            state = .receiving(request, upgrade: wantsUpgrade && routes.isWebSocketPath(request.path))
        case .body(var chunk):
            if case .tooLarge(let discarded) = state {
                let total = discarded + chunk.readableBytes
                if total > HTTPLimits.maxLingerBytes { return context.close(promise: nil) }
                state = .tooLarge(discarded: total)
                return
            }
            guard case .receiving(var request, let upgrade) = state else { return }
            if request.body.readableBytes + chunk.readableBytes > limits.maxBodySize {
                state = .tooLarge(discarded: 0)
                keepAlive = false
                routes.refused(status: 413, message: "request body larger than \(limits.maxBodySize) bytes (max_request_body)", peer: peer(context))
                write(routes.payloadTooLarge(limit: limits.maxBodySize), context: context, lingering: true)
                return
            }
            request.body.writeBuffer(&chunk)
            state = .receiving(request, upgrade: upgrade)
        case .end:
            switch state {
            case .receiving(let request, let upgrade):
                headTimer?.cancel()
                state = .responding
                if upgrade {
                    upgradeOrRefuse(request, context: context)
                } else {
                    routes.respond(to: request, on: context.eventLoop).hop(to: context.eventLoop)
                        .assumeIsolated().whenComplete { result in
                            switch result {
                            case .success(let response): self.write(response, context: context)
                            case .failure: self.write(.text(500, "internal error"), context: context)
                            }
                        }
                }
            case .tooLarge:
                tooLargeEnded = true
                if tooLargeAnswered { context.close(promise: nil) }
            default:
                break
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // After a framing error the decoder only repeats itself; the 400 is written or waits its turn.
        if failedFraming { return }
        guard let message = Self.framingError(error) else {
            // Not a request the parser refused: the peer reset the connection or left in the middle of
            // a request. There is nobody to answer.
            context.close(promise: nil)
            return
        }
        switch state {
        case .idle, .receiving:
            // Not HTTP, or framing the parser cannot follow (a bad Transfer-Encoding, a chunk size that
            // is not hex): answer 400 once, then close.
            refuseMalformed(message, context: context)
        case .responding:
            // A request pipelined behind the one being answered cannot be framed: that answer is
            // written first, then this 400 in its turn, then the connection closes.
            failedFraming = true
            queued.append(.malformed(message))
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        case .tooLarge, .upgraded:
            context.close(promise: nil)
        }
    }

    /// The message of the 400 for an error of the HTTP decoder (a request it cannot frame), or nil
    /// for anything else (I/O errors, the peer leaving in the middle of a request).
    private static func framingError(_ error: any Error) -> String? {
        if let parser = error as? HTTPParserError {
            switch parser {
            case .invalidEOFState, .closedConnection: return nil
            default: return "malformed HTTP request: \(parser)"
            }
        }
        if error is NIOHTTPDecoderError { return "malformed HTTP request: \(error)" }
        return nil
    }

    /// Answers 400 for a request that cannot be framed, logs the refusal, then closes.
    private func refuseMalformed(_ message: String, context: ChannelHandlerContext) {
        failedFraming = true
        state = .responding
        keepAlive = false
        queued = []
        queuedBytes = 0
        routes.refused(status: 400, message: message, peer: peer(context))
        write(routes.refusal(status: 400, message: message), context: context)
    }

    private func upgradeOrRefuse(_ request: HTTPRequest, context: ChannelHandlerContext) {
        let decision = handshake.negotiate(
            method: request.method, versionMajor: request.versionMajor, versionMinor: request.versionMinor,
            headers: request.headers)
        let acceptance: ServerHandshake.Acceptance
        switch decision {
        case .failure(let rejection):
            keepAlive = false
            routes.refused(status: rejection.status, message: "WebSocket upgrade refused: \(rejection.reason)", peer: peer(context))
            write(.text(rejection.status, rejection.reason, headers: rejection.headers), context: context)
            return
        case .success(let accepted):
            acceptance = accepted
        }
        let application: any WebSocketApplication
        switch routes.webSocketApplication(for: request, on: context.eventLoop) {
        case .failure(let rejection):
            keepAlive = false
            routes.refused(status: rejection.response.status, message: "WebSocket upgrade of \(request.path) refused", peer: peer(context))
            write(rejection.response, context: context)
            return
        case .success(let app):
            application = app
        }

        var headers = HTTPHeaders()
        for field in acceptance.headers.fields { headers.add(name: field.name, value: field.value) }
        let head = HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.flush()

        state = .upgraded
        let connection = WebSocketConnection(settings: connectionSettings, compression: acceptance.compression)
        let handler = WebSocketChannelHandler(
            connection: connection, application: application, timeouts: webSocket.timeouts)
        let pipeline = context.pipeline.syncOperations
        do {
            // The encoder goes first: an application may send as soon as it is connected (inside
            // addHandler), and those frames must not pass through the HTTP encoder.
            if let encoder = try? pipeline.handler(type: HTTPResponseEncoder.self) {
                pipeline.removeHandler(encoder, promise: nil)
            }
            try pipeline.addHandler(handler, position: .after(self))
            if let decoder = try? pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
                pipeline.removeHandler(decoder, promise: nil)
            }
            pipeline.removeHandler(headGuard, promise: nil)
            pipeline.removeHandler(self, promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    /// Writes `response`; then, unless keep-alive, closes (with `lingering`, only once the request's
    /// end has arrived as well).
    private func write(_ response: HTTPResponse, context: ChannelHandlerContext, lingering: Bool = false) {
        var headers = HTTPHeaders()
        for field in response.headers.fields { headers.add(name: field.name, value: field.value) }
        headers.replaceOrAdd(name: "Content-Length", value: String(response.body.readableBytes))
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if response.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil)
        }
        let keepAlive = self.keepAlive
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if keepAlive {
                self.state = .idle
                self.answeredOne = true
                self.headGuard.requestCompleted()
                self.armHeadTimer(context: context)
                self.resumeQueued(context: context)
            } else if lingering {
                self.tooLargeAnswered = true
                if self.tooLargeEnded { context.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        }
    }

    /// Slowloris guard: a whole request (head and body) must arrive within the limit; 408 and close
    /// past it. The same limit is the idle timeout of a keep-alive connection between requests: one
    /// that answered a request and has received no byte of the next is closed without a response (a
    /// client reusing it at that moment would take a 408 for the answer to its new request). A 413
    /// still being drained is simply closed.
    private func armHeadTimer(context: ChannelHandlerContext) {
        headTimer?.cancel()
        headTimer = context.eventLoop.assumeIsolated().scheduleTask(in: limits.headTimeout) { [self] in
            switch state {
            case .idle where answeredOne && queued.isEmpty && !headGuard.headStarted:
                context.close(promise: nil)
            case .idle, .receiving:
                keepAlive = false
                state = .responding
                queued = []
                let message = "request not received within \(limits.headTimeout.nanoseconds / 1_000_000_000) s (request_timeout)"
                routes.refused(status: 408, message: message, peer: peer(context))
                write(routes.refusal(status: 408, message: message), context: context)
            case .tooLarge:
                context.close(promise: nil)
            case .responding, .upgraded:
                break
            }
        }
    }
}
