import Testing

/// Every suite that starts servers or processes: run one at a time, so that the ones measuring the
/// process (descriptors, memory, timing) see only their own sockets.
@Suite("End to end", .serialized)
enum EndToEnd {}
