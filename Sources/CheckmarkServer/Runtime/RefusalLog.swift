import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Logs each refusal (a request or connection turned away: bad input, a limit, bad credentials) once,
/// at `notice`, with who was refused; at most ``maxLinesPerSecond`` lines a second, so that a flood of
/// bad requests cannot flood the log. Lines dropped meanwhile are counted in the next line
/// (`suppressed`).
final class RefusalLog: Sendable {
    let logger: Logger
    let maxLinesPerSecond: Int
    private let window = NIOLockedValueBox((start: NIODeadline.now(), lines: 0, suppressed: 0))

    init(logger: Logger, maxLinesPerSecond: Int = 20) {
        self.logger = logger
        self.maxLinesPerSecond = maxLinesPerSecond
    }

    /// Logs `what` with `metadata` unless this second's lines are used up.
    func refused(_ what: String, _ metadata: Logger.Metadata, now: NIODeadline = .now()) {
        let suppressed: Int? = window.withLockedValue { window in
            if now - window.start >= .seconds(1) { window = (now, 0, window.suppressed) }
            guard window.lines < maxLinesPerSecond else {
                window.suppressed += 1
                return nil
            }
            window.lines += 1
            defer { window.suppressed = 0 }
            return window.suppressed
        }
        guard let suppressed else { return }
        var metadata = metadata
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
        logger.notice("refused: \(what)", metadata: metadata)
    }
}
