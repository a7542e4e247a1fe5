import Logging

/// Keeps every line logged through it in a ``CapturedLog``.
public struct CapturingLogHandler: LogHandler {
    public let log: CapturedLog
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    public init(log: CapturedLog) { self.log = log }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        log.append(.init(level: event.level, message: event.message.description,
                         metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }
}
