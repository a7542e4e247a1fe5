import NIOCore

/// On the listening channel: stops accepting for ``HTTPLimits/acceptBackoff`` when accept fails for
/// want of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM), instead of spinning.
///
/// Such a connection stays in the kernel's backlog, so the listening socket stays readable; retried
/// at once, accept fails again, and the event loop spins (issue 18: 32-45 s of CPU per 20 s, and
/// `/healthz` timing out). NIO's `AcceptBackoffHandler` does not prevent that with the classic
/// `ServerBootstrap` (NIO 2.101): it delays the next `read()`, but when the first accept of a read
/// cycle fails the channel's read stays pending, no `read()` is ever issued, and the socket stays
/// registered for readability (measured: ~50,000 failed accepts a second with it in place). Turning
/// `autoRead` off takes the socket out of the selector; it is turned back on after the pause. Each
/// pause is reported once through `paused`.
final class AcceptPauseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel

    private let pause: TimeAmount
    private let paused: (IOError) -> Void
    private var resumption: Scheduled<Void>?

    init(pause: TimeAmount, paused: @escaping (IOError) -> Void) {
        self.pause = pause
        self.paused = paused
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError, HTTPLimits.isResourceExhaustion(ioError) else {
            context.fireErrorCaught(error)
            return
        }
        guard resumption == nil else { return }
        paused(ioError)
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        resumption = context.eventLoop.assumeIsolated().scheduleTask(in: pause) { [self] in
            resumption = nil
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
    }
}
