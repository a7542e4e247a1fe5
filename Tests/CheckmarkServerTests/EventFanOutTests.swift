@testable import CheckmarkServer
import CheckmarkCore
import CheckmarkWebSocket
import CheckmarkWire
import CoreMetrics
import Dispatch
import NIOCore
import NIOEmbedded
import Testing

/// The fan-out of a batch of committed events to the connections open on this node.
@Suite("Event fan-out: batches by event loop")
struct EventFanOutTests {
    /// Records the frames delivered to it.
    final class RecordingSink: EventSink {
        let eventLoop: any EventLoop
        var sharedCompressionWindowBits: Int? { nil }
        var received: [String] = []
        init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }
        func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) -> Bool {
            received.append(type)
            return true
        }
    }

    /// Records the frames delivered to it, as a connection taking shared compressed frames at
    /// `windowBits` (nil: plain frames).
    final class FrameSink: EventSink {
        let eventLoop: any EventLoop
        let sharedCompressionWindowBits: Int?
        var frames: [[UInt8]] = []
        init(eventLoop: any EventLoop, windowBits: Int?) {
            self.eventLoop = eventLoop
            self.sharedCompressionWindowBits = windowBits
        }
        func deliver(frame: ByteBuffer, type: String, cid: ChannelCID?, channelSeq: Int64?) -> Bool {
            frames.append(Array(frame.readableBytesView))
            return true
        }
    }

    /// An embedded loop that counts the tasks handed to it.
    final class CountingLoop: EventLoop, @unchecked Sendable {
        let inner = EmbeddedEventLoop()
        var executed = 0
        var inEventLoop: Bool { inner.inEventLoop }
        func execute(_ task: @escaping @Sendable () -> Void) {
            executed += 1
            inner.execute(task)
        }
        func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            inner.scheduleTask(deadline: deadline, task)
        }
        func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            inner.scheduleTask(in: delay, task)
        }
        func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
            inner.shutdownGracefully(queue: queue, callback)
        }
    }

    /// The connections these tests name, at their handles' slots in that order.
    static let names = ["a", "b", "c", "gone"]

    static func handle(_ name: String) -> ConnectionHandle {
        ConnectionHandle(slot: UInt32(names.firstIndex(of: name)!), serial: 1)
    }

    /// The service's table of open connections, with these sinks (a name without one is not open).
    static func open(_ sinks: [String: any EventSink]) -> [OpenConnection] {
        names.map { name in sinks[name].map { OpenConnection(sink: $0, openedAt: .unknown, serial: 1) } ?? .empty }
    }

    static func event(_ type: String, to connections: [String]) -> (ReceiptsEvent, SharedEvent) {
        let recipients = connections.map { Recipient(connection: handle($0), connectionID: $0, userID: "u-" + $0, counts: nil) }
        let event = ReceiptsEvent(payload: .notificationMarkRead(user: User(id: "reader"), lastReadMessageID: nil, channel: nil),
                                  cid: nil, createdAt: Timestamp(microseconds: 0), recipients: recipients)
        let json = Array("{\"type\":\"\(type)\"}".utf8)
        return (event, SharedEvent(type: type, encoded: EncodedEvent(stored: json, type: type), cid: nil, channelSeq: nil))
    }

    /// Every connection gets its share of every event of the batch, in the batch's order, and nothing
    /// before its loop runs; recipients without an open connection here are skipped.
    @Test func aBatchReachesEachConnectionInOrderOnItsOwnLoop() throws {
        let first = EmbeddedEventLoop()
        let second = EmbeddedEventLoop()
        let a = RecordingSink(eventLoop: first)
        let b = RecordingSink(eventLoop: second)
        let c = RecordingSink(eventLoop: first)
        let fanOut = EventFanOut(metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), compression: .init())
        fanOut.send([
            Self.event("one", to: ["a", "b", "gone"]),
            Self.event("two", to: ["c"]),
            Self.event("three", to: ["b", "a", "c"]),
        ], to: Self.open(["a": a, "b": b, "c": c]))
        #expect(a.received.isEmpty && b.received.isEmpty && c.received.isEmpty)
        first.run()
        #expect(a.received == ["one", "three"])
        #expect(c.received == ["two", "three"])
        #expect(b.received.isEmpty, "the other loop's share waits for that loop")
        second.run()
        #expect(b.received == ["one", "three"])
    }

    /// Events are released once durable, after their connections may have closed: a recipient whose
    /// connection closed reaches nobody, not the connection that took its slot since.
    @Test func aClosedConnectionsEventDoesNotReachTheConnectionNowInItsSlot() {
        let loop = EmbeddedEventLoop()
        let newcomer = RecordingSink(eventLoop: loop)
        let fanOut = EventFanOut(metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), compression: .init())
        var table = Self.open([:])
        table[Self.handle("a").index] = OpenConnection(sink: newcomer, openedAt: .unknown, serial: 2)
        fanOut.send([Self.event("for the closed one", to: ["a"])], to: table)
        loop.run()
        #expect(newcomer.received.isEmpty)
        fanOut.send([Self.event("for the newcomer", to: [])].map { event, shared in
            var event = event
            event.recipients = [Recipient(connection: ConnectionHandle(slot: 0, serial: 2), connectionID: "a2", userID: "u-a2", counts: nil)]
            return (event, shared)
        }, to: table)
        loop.run()
        #expect(newcomer.received == ["for the newcomer"])
    }

    /// Each recipient gets the frame its connection takes, as it said when it opened: compressed at
    /// its own window size, or plain. A 1,500-byte block repeated once compresses well behind a 15-bit
    /// window and not behind a 9-bit one (512 bytes), so the two compressed frames differ.
    @Test func eachRecipientGetsTheFrameOfItsWindowSizeOrPlain() throws {
        let loop = EmbeddedEventLoop()
        let wide = FrameSink(eventLoop: loop, windowBits: 15)
        let narrow = FrameSink(eventLoop: loop, windowBits: 9)
        let plain = FrameSink(eventLoop: loop, windowBits: nil)
        var seed: UInt64 = 21
        let block = (0..<1_500).map { _ -> Character in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Character(Unicode.Scalar(UInt8(97 + (seed >> 33) % 26)))
        }
        let (event, _) = Self.event("big", to: ["a", "b", "c"])
        let json = Array("{\"type\":\"big\",\"text\":\"\(String(block))\(String(block))\"}".utf8)
        let shared = SharedEvent(type: "big", encoded: EncodedEvent(stored: json, type: "big"), cid: nil, channelSeq: nil)
        let fanOut = EventFanOut(metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), compression: .init())
        fanOut.send([(event, shared)], to: Self.open(["a": wide, "b": narrow, "c": plain]))
        loop.run()
        let (w, n, p) = (try #require(wide.frames.first), try #require(narrow.frames.first), try #require(plain.frames.first))
        #expect(p[0] == 0x81, "plain: FIN and text, no RSV1")
        #expect(w[0] == 0xC1 && n[0] == 0xC1, "compressed: FIN, RSV1 and text")
        #expect(w.count < n.count - 1_000, "the 15-bit window's frame finds the repeat; the 9-bit one's cannot (\(w.count) vs \(n.count) bytes)")
        #expect(n.count < p.count)
    }

    /// A group commit's events cost each loop one task, whatever their number: the frames of the batch
    /// reach a connection within one tick, where they go to the socket as one write.
    @Test func aBatchIsOneTaskPerLoop() {
        let first = CountingLoop()
        let second = CountingLoop()
        let sinks: [String: any EventSink] = [
            "a": RecordingSink(eventLoop: first), "b": RecordingSink(eventLoop: second), "c": RecordingSink(eventLoop: first),
        ]
        let fanOut = EventFanOut(metrics: ServiceMetrics(factory: NOOPMetricsHandler.instance), compression: .init())
        fanOut.send((0..<5).map { Self.event("e\($0)", to: ["a", "b", "c"]) }, to: Self.open(sinks))
        #expect(first.executed == 1)
        #expect(second.executed == 1)
        first.inner.run()
        second.inner.run()
        #expect((sinks["c"] as! RecordingSink).received == ["e0", "e1", "e2", "e3", "e4"])
    }
}
