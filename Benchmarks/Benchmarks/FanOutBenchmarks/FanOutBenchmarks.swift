import Benchmark
import CheckmarkWebSocket
import CheckmarkWebSocketNIO
import NIOCore
import NIOEmbedded

/// Keeps the sessions of the connections it is given, as the gateway does.
final class SessionCollector: WebSocketApplication {
    var sessions: [WebSocketSession] = []
    func connected(_ session: WebSocketSession) { sessions.append(session) }
    func received(_ message: WebSocketMessage, on session: WebSocketSession) {}
    func disconnected(_ session: WebSocketSession, code: WebSocketCloseCode?) {}
}

/// `count` server connections on one event loop (as a node's connections share its few loops).
func connections(_ count: Int, on loop: EmbeddedEventLoop) throws -> (channels: [EmbeddedChannel], sessions: [WebSocketSession]) {
    let collector = SessionCollector()
    var channels: [EmbeddedChannel] = []
    for _ in 0..<count {
        let handler = WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: collector,
            timeouts: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil))
        channels.append(EmbeddedChannel(handler: handler, loop: loop))
    }
    return (channels, collector.sessions)
}

/// A `message.new` frame of the size Checkmark sends (about 1.3 KB), encoded once for everyone.
func sharedFrame() -> ByteBuffer {
    var payload = ByteBuffer()
    payload.writeString(#"{"type":"message.new","cid":"messaging:room","message":{"id":"room-1","text":""#)
    payload.writeString(String(repeating: "x", count: 1_200))
    payload.writeString(#""}}"#)
    var frame = ByteBuffer()
    FrameEncoder.encode(opcode: .text, payload: payload, maskingKey: nil, into: &frame)
    return frame
}

let benchmarks: @Sendable () -> Void = {
    // CI checks allocation counts, which do not depend on the machine's speed or load; a local run
    // also reports time and instructions. One iteration is one tick of one event loop: the frames
    // of `events` events handed to each of 1,000 connections, the loop's end-of-tick flush, and the
    // written bytes taken off each channel. What a recipient costs in allocations is the count per
    // iteration divided by 1,000: a per-frame or per-recipient allocation shows up as 1,000 more.
    if Environment.isCI {
        Benchmark.defaultConfiguration.thresholds = [.mallocCountTotal: BenchmarkThresholds(relative: [.p90: 10], absolute: [.p90: 2])]
    }
    let metrics: [BenchmarkMetric] = Environment.isCI ? [.mallocCountTotal] : [.wallClock, .mallocCountTotal, .instructions]
    let frame = sharedFrame()

    for events in [1, 4] {
        Benchmark("recipients-1000-\(events)-shared-frames-per-tick", configuration: .init(metrics: metrics, scalingFactor: .one, maxIterations: 500)) { benchmark in
            let loop = EmbeddedEventLoop()
            let (channels, sessions) = try connections(1_000, on: loop)
            func tick() throws {
                for _ in 0..<events {
                    for session in sessions { blackHole(session.send(encodedFrame: frame)) }
                }
                loop.run()
                for channel in channels {
                    while let written = try channel.readOutbound(as: ByteBuffer.self) { blackHole(written) }
                }
            }
            // Storage that a connection keeps from tick to tick (queues, the loop's flush list) is
            // grown before measuring.
            for _ in 0..<3 { try tick() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { try tick() }
            benchmark.stopMeasurement()
            for channel in channels { _ = try? channel.finish() }
        }
    }
}
