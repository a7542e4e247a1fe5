/// Appends JSON text to a byte array: deterministic (keys in the order written), no Foundation.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]
    /// Whether each open container already holds a value (so the next one needs a comma), for the
    /// 64 innermost: bit 0 is the innermost container.
    private var commaBits: UInt64 = 0
    /// How many containers are open.
    private var depth = 0
    /// The bits of containers more than 64 levels out, outermost first.
    private var deeperCommaBits: [Bool] = []

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        open()
    }

    public mutating func endObject() {
        close()
        bytes.append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        open()
    }

    public mutating func endArray() {
        close()
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes `"key":`; the value follows.
    public mutating func key(_ key: String) {
        separator()
        writeString(key)
        bytes.append(UInt8(ascii: ":"))
        commaBits &= ~1
    }

    public mutating func string(_ value: String) {
        separator()
        writeString(value)
    }

    public mutating func int(_ value: Int) {
        separator()
        Self.appendDecimal(value, to: &bytes)
    }

    /// Appends `value` in decimal, as `String(value)` spells it.
    package static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value >= 0 && value < 10 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var divisor: UInt = 1
        while magnitude / divisor >= 10 { divisor &*= 10 }
        while divisor > 0 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude / divisor))
            magnitude %= divisor
            divisor /= 10
        }
    }

    public mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separator()
        bytes.append(contentsOf: "null".utf8)
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number):
            separator()
            if let integer = JSONValue.exactInteger(number) {
                // Within ±2^53, so it fits an Int on every platform Checkmark builds for (64-bit).
                Self.appendDecimal(Int(integer), to: &bytes)
            } else if number.isFinite {
                bytes.append(contentsOf: String(number).utf8)
            } else {
                bytes.append(contentsOf: "null".utf8)
            }
        case .string(let text): string(text)
        case .array(let values):
            beginArray()
            for element in values { self.value(element) }
            endArray()
        case .object(let pairs):
            beginObject()
            for (name, element) in pairs {
                key(name)
                self.value(element)
            }
            endObject()
        }
    }

    /// Appends bytes that are already valid JSON for one value.
    public mutating func raw(_ json: [UInt8]) {
        raw(json[...])
    }

    /// Appends bytes that are already valid JSON: one value, or several array elements joined by commas
    /// when inside an array.
    public mutating func raw(_ json: ArraySlice<UInt8>) {
        separator()
        bytes.append(contentsOf: json)
    }

    /// Makes room for `count` more bytes, so that writing them does not grow the storage step by step.
    public mutating func reserveCapacity(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// How many bytes have been written.
    public var count: Int { bytes.count }

    // Convenience for `"key": value` pairs.
    public mutating func field(_ name: String, _ value: String) { key(name); string(value) }
    public mutating func field(_ name: String, _ value: Int) { key(name); int(value) }
    public mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }
    public mutating func field(_ name: String, _ value: Timestamp) {
        key(name)
        separator()
        // RFC 3339 text has nothing to escape.
        bytes.append(UInt8(ascii: "\""))
        value.appendRFC3339(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }
    /// `"name":"type:id"`, written without building the cid's string (a heap string past 15 bytes).
    public mutating func field(_ name: String, _ cid: ChannelCID) {
        key(name)
        separator()
        bytes.append(UInt8(ascii: "\""))
        writeStringContent(cid.type)
        bytes.append(UInt8(ascii: ":"))
        writeStringContent(cid.id)
        bytes.append(UInt8(ascii: "\""))
    }
    public mutating func fieldIfPresent(_ name: String, _ value: String?) {
        if let value { field(name, value) }
    }

    private mutating func separator() {
        guard depth > 0 else { return }
        if commaBits & 1 != 0 {
            bytes.append(UInt8(ascii: ","))
        } else {
            commaBits |= 1
        }
    }

    /// A container opens: it holds no value yet.
    private mutating func open() {
        if depth >= 64 { deeperCommaBits.append(commaBits >> 63 != 0) }
        commaBits <<= 1
        depth += 1
    }

    /// The innermost container closes. - Precondition: one is open.
    private mutating func close() {
        precondition(depth > 0, "JSONWriter: a container closed that was not open")
        depth -= 1
        commaBits >>= 1
        if depth >= 64, deeperCommaBits.removeLast() { commaBits |= 1 << 63 }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func writeString(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        writeStringContent(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string's escaped content, without its quotes.
    private mutating func writeStringContent(_ text: String) {
        // Runs that need no escaping (nearly all of most strings) are copied whole.
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { utf8 in
            var runStart = 0
            for index in utf8.indices where Self.needsEscape(utf8[index]) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(utf8[index])
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        if copied == nil {
            for byte in text.utf8 {
                if Self.needsEscape(byte) { appendEscaped(byte) } else { bytes.append(byte) }
            }
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
        case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
        default:
            bytes.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 15)]])
        }
    }
}
