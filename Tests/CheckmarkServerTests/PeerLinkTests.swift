import Foundation
import Logging
import NIOCore
import NIOConcurrencyHelpers
import NIOEmbedded
import NIOPosix
import Testing

@testable import CheckmarkServer

/// Issue 45: cluster nodes send forwarded commands and their answers over direct links, which only a
/// node holding the deployment's `api_secret` may open.
@Suite("Peer links: nodes of one deployment, one frame at a time")
struct PeerLinkTests {
    static let secret = "peer-link-test-secret-0123456789"
    static let nonce = (0..<32).map { UInt8($0 * 7 & 0xff) }

    @Test func anAnswerMadeWithTheSecretIsAcceptedAndNamesItsNode() {
        let handshake = PeerLinkHandshake(secret: Self.secret)
        let challenge = PeerLinkHandshake.challenge(nonce: Self.nonce)
        #expect(challenge.hasPrefix(PeerLinkHandshake.protocolName + " "))
        let answer = handshake.answer(to: challenge, node: "node7")
        #expect(answer != nil)
        #expect(handshake.verify(answer ?? "", nonce: Self.nonce) == .success("node7"))
    }

    @Test func anAnswerMadeWithAnotherSecretIsRefused() {
        let answer = PeerLinkHandshake(secret: "another-secret-of-another-deploy").answer(to: PeerLinkHandshake.challenge(nonce: Self.nonce), node: "node7")
        #expect(PeerLinkHandshake(secret: Self.secret).verify(answer ?? "", nonce: Self.nonce) == .failure(.wrongProof(node: "node7")))
    }

    @Test func anAnswerToAnotherChallengeIsRefused() {
        let handshake = PeerLinkHandshake(secret: Self.secret)
        let answer = handshake.answer(to: PeerLinkHandshake.challenge(nonce: Self.nonce), node: "node7") ?? ""
        var other = Self.nonce
        other[0] ^= 1
        #expect(handshake.verify(answer, nonce: other) == .failure(.wrongProof(node: "node7")))
    }

    @Test(arguments: ["", "node7", "node7 zz", "Node7 " + String(repeating: "ab", count: 32), "node 7 " + String(repeating: "ab", count: 32),
                      String(repeating: "n", count: 65) + " " + String(repeating: "ab", count: 32)])
    func aMalformedAnswerIsRefused(answer: String) {
        #expect(PeerLinkHandshake(secret: Self.secret).verify(answer, nonce: Self.nonce) == .failure(.malformed))
    }

    @Test(arguments: ["", "HTTP/1.1 200 OK", "checkmark-peer-link/2 " + String(repeating: "ab", count: 32), "checkmark-peer-link/1 abc"])
    func aNodeDoesNotAnswerAChallengeOfAnotherProtocol(challenge: String) {
        #expect(PeerLinkHandshake(secret: Self.secret).answer(to: challenge, node: "node7") == nil)
    }

    @Test func framesAreSplitWhereverTheBytesBreak() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder(maxFrameBytes: 100)))
        var bytes = ByteBuffer()
        try PeerFrameEncoder().encode(data: "first", out: &bytes)
        try PeerFrameEncoder().encode(data: "second, ü", out: &bytes)
        while bytes.readableBytes > 0 {
            try channel.writeInbound(bytes.readSlice(length: min(3, bytes.readableBytes))!)
        }
        #expect(try channel.readInbound(as: String.self) == "first")
        #expect(try channel.readInbound(as: String.self) == "second, ü")
        #expect(try channel.readInbound(as: String.self) == nil)
        _ = try channel.finish()
    }

    @Test func aFrameOverTheLimitIsAnError() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder(maxFrameBytes: 100)))
        var bytes = ByteBuffer()
        bytes.writeInteger(UInt32(101))
        #expect(throws: PeerFrameDecoder.FrameTooLarge.self) { try channel.writeInbound(bytes) }
        _ = try? channel.finish()
    }

    /// What a hostile client of the peer port gets: a frame announced over the limit closes its
    /// connection at once (nothing of it is buffered), and silence after the challenge closes it
    /// after ``PeerLinkServer/handshakeTimeout``; neither reaches the node.
    @Test func aClientThatOverstepsOrStaysSilentIsClosed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let received = NIOLockedValueBox<[String]>([])
        let server = try await PeerLinkServer.start(host: "127.0.0.1", port: 0, secret: Self.secret, on: loop,
                                                    logger: Logger(label: "peer-link-test")) { text in received.withLockedValue { $0.append(text) } }
        let port = server.localAddress?.port ?? 0
        let oversized = try await ClientBootstrap(group: loop).connect(host: "127.0.0.1", port: port).get()
        var header = ByteBuffer()
        header.writeInteger(UInt32(PeerLinkServer.maxFrameBytes + 1))
        try await oversized.writeAndFlush(header).get()
        let silent = try await ClientBootstrap(group: loop).connect(host: "127.0.0.1", port: port).get()
        let started = ContinuousClock.now
        try await oversized.closeFuture.get()
        try await silent.closeFuture.get()
        let waited = ContinuousClock.now - started
        #expect(waited >= .seconds(4) && waited < .seconds(8), "closed after \(waited)")
        #expect(received.withLockedValue { $0 }.isEmpty)
        await server.close()
        try await group.shutdownGracefully()
    }

    /// Regression: a link whose connection was refused left its handshake's promise unfulfilled
    /// (a debug build stops on it); the node goes on sending another way and tries again later.
    @Test func aLinkToANodeThatIsNotListeningFailsQuietly() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        // A port just bound and closed: nothing listens there.
        let probe = try await ServerBootstrap(group: loop).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress?.port ?? 1
        try await probe.close()
        let links = try await loop.submit { PeerLinks(node: "member", secret: Self.secret, loop: loop, logger: Logger(label: "peer-link-test")) }.get()
        try await loop.submit { links.learn("gone", address: "127.0.0.1:\(port)") }.get()
        #expect(try await loop.submit { links.send("one", to: "gone") }.get() == false)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await loop.submit { links.send("two", to: "gone") }.get() == false)
        try await loop.submit { links.close() }.get()
        try await group.shutdownGracefully()
    }

    /// Two real ends on 127.0.0.1: a node with the listener's secret gets a link and its messages
    /// arrive in order; a node with another secret never gets one (its messages go another way).
    @Test func onlyANodeWithTheDeploymentsSecretGetsALink() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let logger = Logger(label: "peer-link-test")
        let received = NIOLockedValueBox<[String]>([])
        let server = try await PeerLinkServer.start(host: "127.0.0.1", port: 0, secret: Self.secret, on: loop, logger: logger) { text in
            received.withLockedValue { $0.append(text) }
        }
        let address = "127.0.0.1:\(server.localAddress?.port ?? 0)"
        let stranger = try await loop.submit { PeerLinks(node: "stranger", secret: "another-secret-of-another-deploy", loop: loop, logger: logger) }.get()
        let member = try await loop.submit { PeerLinks(node: "member", secret: Self.secret, loop: loop, logger: logger) }.get()
        try await loop.submit {
            stranger.learn("listener", address: address)
            member.learn("listener", address: address)
        }.get()
        var memberSent = false
        var strangerSent = false
        for attempt in 0..<100 where !memberSent {
            memberSent = try await loop.submit { member.send("one", to: "listener") }.get()
            strangerSent = try await loop.submit { stranger.send("from a stranger \(attempt)", to: "listener") }.get() || strangerSent
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(memberSent)
        #expect(try await loop.submit { member.send("two", to: "listener") }.get())
        for _ in 0..<100 where received.withLockedValue({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(received.withLockedValue { $0 } == ["one", "two"])
        #expect(!strangerSent)
        try await loop.submit {
            stranger.close()
            member.close()
        }.get()
        await server.close()
        try await group.shutdownGracefully()
    }
}
