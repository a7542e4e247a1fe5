/// Incremental UTF-8 validation (RFC 3629) that fails at the first byte that cannot start or continue
/// a valid sequence, so a text message split across frames is refused as soon as the bad byte arrives.
public struct UTF8Validator: Sendable, Hashable {
    /// Continuation bytes still expected for the sequence in progress.
    private var pending: UInt8 = 0
    /// Allowed range of the next continuation byte (narrower after E0, ED, F0 and F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    public init() {}

    /// True when the bytes so far end on a character boundary.
    public var isComplete: Bool { pending == 0 }

    /// Feeds more bytes; returns false as soon as they cannot be part of valid UTF-8.
    /// After a false return the validator must not be used again.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            if pending == 0 {
                // Fast path: eight ASCII bytes at once.
                while index + 8 <= count {
                    let word = (base + index).loadUnaligned(as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 != 0 { break }
                    index += 8
                }
                if index >= count { break }
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: pending = 1; lower = 0x80; upper = 0xBF
                case 0xE0: pending = 2; lower = 0xA0; upper = 0xBF
                case 0xE1...0xEC, 0xEE...0xEF: pending = 2; lower = 0x80; upper = 0xBF
                case 0xED: pending = 2; lower = 0x80; upper = 0x9F
                case 0xF0: pending = 3; lower = 0x90; upper = 0xBF
                case 0xF1...0xF3: pending = 3; lower = 0x80; upper = 0xBF
                case 0xF4: pending = 3; lower = 0x80; upper = 0x8F
                default: return false
                }
            } else {
                let byte = base.load(fromByteOffset: index, as: UInt8.self)
                index += 1
                guard byte >= lower && byte <= upper else { return false }
                pending -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    /// Validates a whole, self-contained byte sequence.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.feed(bytes) && validator.isComplete
    }
}
