import CheckmarkCore

/// A channel's replay for one connection, under way or waiting its turn: a connection replays one
/// channel at a time, one page at a time, and reads the next page only once the socket took the last
/// one (``GatewaySession``). Pure.
struct ResumeReplay {
    var resume: ChannelResume
    /// The user's counts as of the watch: every replayed event carries them.
    var counts: UnreadCounts
    /// The next `channel_seq` to read from the journal.
    var expected: Int64
    /// Events sent so far.
    var replayed = 0
    /// Whether a page is being read.
    var reading = false
    /// Ended while its page was being read (`channel.resume_failed` is out): that page is dropped.
    var abandoned = false

    init(_ resume: ChannelResume, counts: UnreadCounts) {
        self.resume = resume
        self.counts = counts
        expected = resume.after + 1
    }

    /// Journal rows one page reads at most.
    static let pageEvents = 256
    /// JSON one page reads at most, in bytes, and never more than the connection's outbound limit.
    static let pageBytes = 64 * 1024
}
