#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Reads the few fields the harness needs straight from an event's bytes, without parsing the JSON
/// (the harness must not be the bottleneck of what it measures). Relies on the server's field order
/// only for `type`, which Checkmark writes first; every other field is found by its key.
package struct EventScan {
    package enum Kind: Equatable, Sendable {
        case messageNew, messageRead, messageDelivered, reply, error, healthCheck, other
    }

    package let bytes: UnsafeRawBufferPointer

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private static let typePrefix = Array(#"{"type":""#.utf8)

    package var kind: Kind {
        let prefix = Self.typePrefix
        guard bytes.count > prefix.count + 4, bytes.starts(with: prefix) else { return .other }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[prefix.count...])
        func starts(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard rest.count > count else { return false }
            return memcmp(rest.baseAddress!, text.utf8Start, count) == 0 && rest[count] == UInt8(ascii: "\"")
        }
        if starts("message.new") { return .messageNew }
        if starts("message.read") { return .messageRead }
        if starts("message.delivered") { return .messageDelivered }
        if starts("reply") { return .reply }
        if starts("error") { return .error }
        if starts("health.check") { return .healthCheck }
        return .other
    }

    /// The string value of the first `"key":"` in the event (no unescaping: harness ids need none).
    package func string(after key: StaticString) -> UnsafeRawBufferPointer? {
        guard let offset = Self.find(key, in: bytes) else { return nil }
        let start = offset + key.utf8CodeUnitCount
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        guard end < bytes.count else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Offset of the first occurrence of `key` (memchr for its first byte, then memcmp).
    static func find(_ key: StaticString, in bytes: UnsafeRawBufferPointer) -> Int? {
        let count = key.utf8CodeUnitCount
        guard let base = bytes.baseAddress, count > 0, bytes.count >= count else { return nil }
        let first = Int32(key.utf8Start.pointee)
        var offset = 0
        while offset + count <= bytes.count {
            guard let hit = memchr(base + offset, first, bytes.count - offset - count + 1) else { return nil }
            let position = UnsafeRawPointer(hit) - base
            if memcmp(base + position, key.utf8Start, count) == 0 { return position }
            offset = position + 1
        }
        return nil
    }

    package var messageID: UnsafeRawBufferPointer? { string(after: #""message_id":""#) }
    package var lastReadMessageID: UnsafeRawBufferPointer? { string(after: #""last_read_message_id":""#) }
    package var lastDeliveredMessageID: UnsafeRawBufferPointer? { string(after: #""last_delivered_message_id":""#) }
    /// The id of the event's `user` (the reader, the deliverer, the sender).
    package var userID: UnsafeRawBufferPointer? { string(after: #""user":{"id":""#) }
    package var requestID: UnsafeRawBufferPointer? { string(after: #""request_id":""#) }
    package var cid: UnsafeRawBufferPointer? { string(after: #""cid":""#) }

    /// The number after `marker` in `text` (e.g. the `42` of `u42`), or nil.
    package static func number(after marker: UInt8, in text: UnsafeRawBufferPointer) -> UInt64? {
        guard let index = text.firstIndex(of: marker) else { return nil }
        var value: UInt64 = 0
        var any = false
        var i = index + 1
        while i < text.count, text[i] >= UInt8(ascii: "0"), text[i] <= UInt8(ascii: "9") {
            value = value &* 10 &+ UInt64(text[i] &- UInt8(ascii: "0"))
            any = true
            i += 1
        }
        return any ? value : nil
    }
}
