import Benchmark
import CheckmarkWebSocket
import NIOCore
import NIOEmbedded
import NIOWebSocket

/// A masked client frame carrying `size` bytes, as a server receives it.
func maskedFrame(size: Int) -> ByteBuffer {
    let payload = ByteBuffer(bytes: (0..<size).map { UInt8(truncatingIfNeeded: $0 % 94 + 32) })
    return FrameEncoder.encode(CheckmarkWebSocket.WebSocketFrame(opcode: .binary, payload: payload), maskingKey: WebSocketMaskingKey(0x37FA_213D))
}

/// A JSON-like payload typical of a `message.new` event.
func eventPayload(size: Int) -> ByteBuffer {
    let unit = #"{"type":"message.new","cid":"messaging:general","message":{"id":"m-1","text":"see you at eight ✓✓"},"user":{"id":"ana"}},"#
    var text = ""
    while text.utf8.count < size { text += unit }
    return ByteBuffer(string: String(text.utf8.prefix(size))!)
}

/// The parser under the same pipeline overhead as NIO's decoder, for a like-for-like comparison.
final class FrameParserHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = CheckmarkWebSocket.WebSocketFrame
    var parser = FrameParser(role: .server, maxFrameSize: 2 << 20)
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.append(unwrapInboundIn(data))
        while let frame = try? parser.nextFrame() { context.fireChannelRead(wrapInboundOut(frame)) }
    }
}

let benchmarks: @Sendable () -> Void = {
    // CI checks allocation counts, which do not depend on the machine's speed or load; a local run
    // also reports time, throughput and instructions.
    if Environment.isCI {
        Benchmark.defaultConfiguration.thresholds = [.mallocCountTotal: BenchmarkThresholds(relative: [.p90: 10], absolute: [.p90: 2])]
    }
    let throughputMetrics: [BenchmarkMetric] = Environment.isCI ? [.mallocCountTotal] : [.throughput, .wallClock, .mallocCountTotal, .instructions]

    for (name, size, scaling) in [("125B", 125, BenchmarkScalingFactor.kilo), ("16KiB", 16 << 10, .kilo), ("1MiB", 1 << 20, .one)] {
        let frame = maskedFrame(size: size)
        Benchmark("parse-unmask-\(name)-frames", configuration: .init(metrics: throughputMetrics, scalingFactor: scaling)) { benchmark in
            var parser = FrameParser(role: .server, maxFrameSize: 2 << 20)
            for _ in benchmark.scaledIterations {
                parser.append(frame)
                blackHole(try parser.nextFrame())
            }
        }
    }

    // The same frames through SwiftNIO's WebSocketFrameDecoder (a ByteToMessageDecoder in an
    // EmbeddedChannel, the way NIO runs it), for comparison with the parser above.
    for (name, size, scaling) in [("125B", 125, BenchmarkScalingFactor.kilo), ("16KiB", 16 << 10, .kilo)] {
        let frame = maskedFrame(size: size)
        Benchmark("NIOWebSocket-decode-unmask-\(name)-frames", configuration: .init(metrics: throughputMetrics, scalingFactor: scaling)) { benchmark in
            let channel = EmbeddedChannel(handler: ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 2 << 20)))
            for _ in benchmark.scaledIterations {
                try channel.writeInbound(frame)
                var decoded = try channel.readInbound(as: NIOWebSocket.WebSocketFrame.self)!
                blackHole(decoded.unmaskedData)
                decoded.data = ByteBuffer()
            }
            _ = try channel.finish()
        }
        Benchmark("FrameParser-in-EmbeddedChannel-\(name)-frames", configuration: .init(metrics: throughputMetrics, scalingFactor: scaling)) { benchmark in
            let channel = EmbeddedChannel(handler: FrameParserHandler())
            for _ in benchmark.scaledIterations {
                try channel.writeInbound(frame)
                blackHole(try channel.readInbound(as: CheckmarkWebSocket.WebSocketFrame.self)!)
            }
            _ = try channel.finish()
        }
    }

    for (name, size) in [("125B", 125), ("16KiB", 16 << 10)] {
        let payload = eventPayload(size: size)
        Benchmark("encode-\(name)-server-frames", configuration: .init(metrics: throughputMetrics, scalingFactor: .kilo)) { benchmark in
            var out = ByteBuffer()
            for _ in benchmark.scaledIterations {
                out.clear()
                FrameEncoder.encode(opcode: .text, payload: payload, maskingKey: nil, into: &out)
                blackHole(out)
            }
        }
    }

    let json = eventPayload(size: 16 << 10)
    Benchmark("deflate-16KiB-event-no-context-takeover", configuration: .init(metrics: throughputMetrics, scalingFactor: .one)) { benchmark in
        let deflater = Deflater(windowBits: 15, level: 6, noContextTakeover: true)
        for _ in benchmark.scaledIterations { blackHole(deflater.compressMessage(json)) }
    }

    // A peer may agree on a window down to 512 bytes (server_max_window_bits=9): the deflater's
    // cost per byte must stay that of the default window.
    Benchmark("deflate-16KiB-event-9-bit-window", configuration: .init(metrics: throughputMetrics, scalingFactor: .one)) { benchmark in
        let deflater = Deflater(windowBits: 9, level: 6, noContextTakeover: true)
        for _ in benchmark.scaledIterations { blackHole(deflater.compressMessage(json)) }
    }

    let compressed = Deflater(noContextTakeover: true).compressMessage(json)
    Benchmark("inflate-16KiB-event", configuration: .init(metrics: throughputMetrics, scalingFactor: .one)) { benchmark in
        let inflater = Inflater()
        var out = ByteBuffer()
        for _ in benchmark.scaledIterations {
            out.clear()
            try inflater.inflate(compressed, into: &out, limit: 1 << 20)
            try inflater.finishMessage(into: &out, limit: 1 << 20)
            inflater.reset()
            blackHole(out)
        }
    }

    let validText = eventPayload(size: 16 << 10)
    Benchmark("UTF8-validate-16KiB", configuration: .init(metrics: throughputMetrics, scalingFactor: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(validText.withUnsafeReadableBytes { UTF8Validator.isValid($0) })
        }
    }
}
