import CheckmarkServer
import CheckmarkWebSocket
@testable import CheckmarkWebSocketNIO
import NIOCore
import NIOEmbedded
import Testing

/// One keepalive clock per event loop pings silent connections and closes idle ones, instead of
/// one scheduled task per connection.
@Suite("Keepalive clock of a loop")
struct LoopKeepaliveTests {
    /// A server connection on `loop` with these timeouts.
    static func connection(on loop: EmbeddedEventLoop, keepalive: TimeAmount?, idle: TimeAmount?) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(WebSocketChannelHandler(
            connection: WebSocketConnection(role: .server), application: EchoApplication(),
            timeouts: WebSocketTimeouts(keepaliveInterval: keepalive, idleTimeout: idle)))
        return channel
    }

    /// Pings and close frames written to `channel` since the last call.
    static func frames(_ channel: EmbeddedChannel) throws -> (pings: Int, closes: Int) {
        var pings = 0
        var closes = 0
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            switch buffer.readableBytesView.first {
            case 0x89: pings += 1
            case 0x88: closes += 1
            default: break
            }
        }
        return (pings, closes)
    }

    @Test func connectionsOfOneLoopShareOneClock() throws {
        let loop = EmbeddedEventLoop()
        let channels = try (0..<100).map { _ in try Self.connection(on: loop, keepalive: .seconds(30), idle: .seconds(120)) }
        #expect(LoopKeepalive.existing(on: loop)?.watchedCount == 100)
        let idleOnly = try Self.connection(on: loop, keepalive: nil, idle: nil)
        #expect(LoopKeepalive.existing(on: loop)?.watchedCount == 100, "a connection without timeouts is not watched")
        for channel in channels + [idleOnly] { _ = try? channel.finish() }
    }

    @Test func eachSilentConnectionIsPingedAtItsOwnTime() throws {
        let loop = EmbeddedEventLoop()
        let first = try Self.connection(on: loop, keepalive: .seconds(30), idle: nil)
        loop.advanceTime(by: .seconds(10))
        let second = try Self.connection(on: loop, keepalive: .seconds(30), idle: nil)
        loop.advanceTime(by: .seconds(20))
        #expect(try Self.frames(first).pings == 1)
        #expect(try Self.frames(second).pings == 0)
        loop.advanceTime(by: .seconds(10))
        #expect(try Self.frames(first).pings == 0)
        #expect(try Self.frames(second).pings == 1)
        _ = try? first.finish()
        _ = try? second.finish()
    }

    /// A closed connection leaves the clock, and the one that takes its place is still watched.
    /// (Closed with `close()`: `EmbeddedChannel.finish()` cancels every task of the shared loop.)
    @Test func closingOneConnectionKeepsTheOthersWatched() throws {
        let loop = EmbeddedEventLoop()
        let channels = try (0..<3).map { _ in try Self.connection(on: loop, keepalive: .seconds(30), idle: nil) }
        try channels[0].close().wait()
        #expect(LoopKeepalive.existing(on: loop)?.watchedCount == 2)
        loop.advanceTime(by: .seconds(30))
        #expect(try Self.frames(channels[1]).pings == 1)
        #expect(try Self.frames(channels[2]).pings == 1)
        try channels[2].close().wait()
        loop.advanceTime(by: .seconds(30))
        #expect(try Self.frames(channels[1]).pings == 1)
        try channels[1].close().wait()
        #expect(LoopKeepalive.existing(on: loop) == nil, "the clock goes with the loop's last watched connection")
    }

    /// An idle close is at most one look late: an eighth of the timeout, at most a second.
    @Test func idleTimeoutClosesWithinAnEighthOfIt() throws {
        let loop = EmbeddedEventLoop()
        let channel = try Self.connection(on: loop, keepalive: nil, idle: .milliseconds(200))
        loop.advanceTime(by: .milliseconds(199))
        #expect(try Self.frames(channel).closes == 0)
        loop.advanceTime(by: .milliseconds(26))
        #expect(try Self.frames(channel).closes == 1)
        #expect(LoopKeepalive.existing(on: loop) == nil, "an idle-closed connection is no longer watched")
        _ = try? channel.finish()
    }

    /// Closes that remove connections from the clock in the middle of its look leave the others
    /// alone.
    @Test func severalIdleConnectionsCloseInOneLook() throws {
        let loop = EmbeddedEventLoop()
        let channels = try (0..<5).map { _ in try Self.connection(on: loop, keepalive: nil, idle: .seconds(8)) }
        loop.advanceTime(by: .seconds(8))
        for channel in channels { #expect(try Self.frames(channel).closes == 1) }
        #expect(LoopKeepalive.existing(on: loop) == nil)
        for channel in channels { _ = try? channel.finish() }
    }

    /// Regression (found in review): when the loop dropped the clock's task (a test loop's
    /// `finish()`, a loop shutting down), the clock kept believing it was scheduled, and connections
    /// added afterwards were never pinged.
    @Test func aClockWhoseTaskTheLoopDroppedStartsAgain() throws {
        let loop = EmbeddedEventLoop()
        let kept = try Self.connection(on: loop, keepalive: .seconds(30), idle: nil)
        let finished = try Self.connection(on: loop, keepalive: .seconds(30), idle: nil)
        loop.advanceTime(by: .seconds(1))
        _ = try finished.finish()
        let added = try Self.connection(on: loop, keepalive: .seconds(30), idle: nil)
        loop.advanceTime(by: .seconds(30))
        #expect(try Self.frames(added).pings == 1)
        #expect(try Self.frames(kept).pings == 1)
        _ = try? kept.finish()
        _ = try? added.finish()
    }

    @Test func periodIsAnEighthOfTheShortestTimeBetweenItsBounds() {
        #expect(LoopKeepalive.period(for: WebSocketTimeouts(keepaliveInterval: .seconds(30), idleTimeout: .seconds(120))) == .seconds(1))
        #expect(LoopKeepalive.period(for: WebSocketTimeouts(keepaliveInterval: .milliseconds(800), idleTimeout: .seconds(120))) == .milliseconds(100))
        #expect(LoopKeepalive.period(for: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: .milliseconds(16))) == .milliseconds(5))
        #expect(LoopKeepalive.period(for: WebSocketTimeouts(keepaliveInterval: nil, idleTimeout: nil)) == nil)
    }
}
