import Foundation
import Logging

/// Log lines kept for a test to read (written through ``CapturingLogHandler``).
public final class CapturedLog: @unchecked Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var lines: [Line] = []

    public init() {}

    public func append(_ line: Line) { lock.withLock { lines.append(line) } }

    /// Every line so far.
    public var all: [Line] { lock.withLock { lines } }

    /// The refusal lines so far.
    public var refusals: [Line] { lock.withLock { lines.filter { $0.message.hasPrefix("refused:") } } }
}
