/// How much structure ``JSONParser`` accepts from one text: what bounds the work and memory a hostile
/// request or WebSocket message can cost. A text past a limit is refused with a
/// ``JSONParser/Failure`` whose ``JSONParser/Failure/limit`` names it (the REST API answers 400, the
/// gateway closes with 1009).
public struct JSONLimits: Sendable, Hashable {
    /// Deepest nesting of arrays and objects (`json_max_depth`).
    public var maxDepth: Int
    /// Most keys in one object (`json_max_keys`).
    public var maxKeysPerObject: Int
    /// Longest string (key or value), in bytes after unescaping (`json_max_string`).
    public var maxStringBytes: Int

    public init(maxDepth: Int = 64, maxKeysPerObject: Int = 1_000, maxStringBytes: Int = 64 << 10) {
        self.maxDepth = maxDepth
        self.maxKeysPerObject = maxKeysPerObject
        self.maxStringBytes = maxStringBytes
    }

    /// What clients' input is held to unless configured otherwise.
    public static let `default` = JSONLimits()

    /// For Checkmark's own stored text (the journal, traces), which was accepted under the limits in
    /// force when it was written: wide bounds that still stop a damaged file from recursing forever.
    public static let stored = JSONLimits(maxDepth: 128, maxKeysPerObject: 1 << 20, maxStringBytes: 1 << 26)
}
