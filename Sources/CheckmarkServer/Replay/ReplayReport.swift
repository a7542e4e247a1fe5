/// What `checkmark replay run` found: how much it re-ran and every difference from the recording.
public struct ReplayReport: Sendable {
    public var commands = 0
    public var connections = 0
    /// Events compared, summed over connections.
    public var eventsCompared = 0
    /// Receipts delivered to someone other than their subject while the subject's privacy setting
    /// (as the trace set it) withheld them: must stay empty.
    public var privacyViolations: [String] = []
    /// Readable differences, one per connection or command that differs.
    public var differences: [String] = []
    public var seconds = 0.0

    public init() {}

    public var passed: Bool { differences.isEmpty && privacyViolations.isEmpty }
}
