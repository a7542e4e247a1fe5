import CheckmarkAuth
import CheckmarkCore
import CheckmarkWire
import NIOCore
import NIOHTTP1
import NIOPosix

/// The harness's REST calls for setting a scenario up (users, channel types, channels), with the
/// server token. One HTTP/1.1 request per connection; setup is not measured.
package struct BenchHTTPClient: Sendable {
    package let host: String
    package let port: Int
    package let apiKey: String
    let serverToken: String

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package init(host: String, port: Int, apiKey: String, apiSecret: String) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
        serverToken = JWT.sign(claims: .object([("server", .bool(true))]), secret: apiSecret)
    }

    /// The server's `/metrics` (Prometheus text) as name (with labels) to value; empty if unavailable.
    package func metrics() async -> [String: Double] {
        guard let (status, body) = try? await exchange(method: "GET", uri: "/metrics", payload: []), status == 200 else { return [:] }
        var values: [String: Double] = [:]
        for line in String(buffer: body).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
        return values
    }

    /// Sends one request, with the server token or the given (user) token; returns the parsed JSON
    /// answer, or throws with the server's error text.
    @discardableResult
    package func call(_ method: String, _ path: String, body: JSONValue? = nil, token: String? = nil) async throws -> JSONValue {
        var payload: [UInt8] = []
        if let body {
            var writer = JSONWriter()
            writer.value(body)
            payload = writer.bytes
        }
        let separator = path.contains("?") ? "&" : "?"
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: "\(path)\(separator)api_key=\(apiKey)")
        head.headers.add(name: "Authorization", value: token ?? serverToken)
        head.headers.add(name: "stream-auth-type", value: "jwt")
        head.headers.add(name: "Content-Type", value: "application/json")
        let (status, bytes) = try await exchange(method: method, uri: head.uri, payload: payload, headers: head.headers)
        guard (200..<300).contains(status) else {  // 201 for what Stream answers with 201 (SendReaction, SendEvent)
            throw Failure(description: "\(method) \(path): HTTP \(status) \(String(buffer: bytes))")
        }
        do { return try JSONParser.parse(bytes.readableBytesView, limits: .stored) } catch {
            throw Failure(description: "\(method) \(path): answer is not JSON")
        }
    }

    private func exchange(method: String, uri: String, payload: [UInt8], headers: HTTPHeaders = [:]) async throws -> (Int, ByteBuffer) {
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: uri, headers: headers)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Content-Length", value: String(payload.count))
        head.headers.add(name: "Connection", value: "close")
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let answer = eventLoop.makePromise(of: (Int, ByteBuffer).self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: answer))
                }
            }
            .connect(host: host, port: port).get()
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: payload))), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        defer { channel.close(promise: nil) }
        return try await answer.futureResult.get()
    }

    /// Gathers one response's status and body.
    private final class ResponseCollector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        let promise: EventLoopPromise<(Int, ByteBuffer)>
        var status = 0
        var body = ByteBuffer()

        init(promise: EventLoopPromise<(Int, ByteBuffer)>) {
            self.promise = promise
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): status = Int(head.status.code)
            case .body(var chunk): body.writeBuffer(&chunk)
            case .end: promise.succeed((status, body))
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(Failure(description: "the connection closed before the answer was complete"))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }
    }
}
