/// How `checkmark serve` writes its log to standard error (setting `log_format`).
package enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's plain lines: time, level, label, message and metadata as `key=value`.
    case text
    /// One JSON object a line (``JSONLogHandler``).
    case json
}
