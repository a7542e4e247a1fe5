/// What `checkmark replay run` found: how much it re-ran and every difference from the recording.
package struct ReplayReport: Sendable {
    package var commands = 0
    package var connections = 0
    /// Events compared, summed over connections.
    package var eventsCompared = 0
    /// Receipts delivered to someone other than their subject while the subject's privacy setting
    /// (as the trace set it) withheld them: must stay empty.
    package var privacyViolations: [String] = []
    /// Readable differences, one per connection or command that differs.
    package var differences: [String] = []
    package var seconds = 0.0

    package init() {}

    package var passed: Bool { differences.isEmpty && privacyViolations.isEmpty }
}
