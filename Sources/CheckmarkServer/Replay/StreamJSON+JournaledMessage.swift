import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire

extension StreamJSON {
    /// A journaled event's JSON as it was sent: whole as stored, or, for an event whose message object
    /// storage keeps once (``JournaledMessage``), with that object written again from the stored
    /// message, its sender being the event's `user` that follows it. The same bytes as sent, since
    /// messages do not change once stored.
    /// - Throws: ``StorageError/corrupt(path:reason:)`` when the stored message is missing, the
    ///   event's `user` is not where the message object went, or the object written again is not of
    ///   the stored length.
    package static func wholeJSON(of event: JournalEvent) throws(StorageError) -> [UInt8] {
        guard let reference = event.message else { return event.json }
        func corrupt(_ what: String) -> StorageError {
            .corrupt(path: "", reason: "journal event \(event.seq): \(what)")
        }
        guard let message = reference.message else { throw corrupt("its stored message was not read") }
        let json = event.json
        let senderStart = reference.offset + userKey.count
        guard reference.offset >= 0, senderStart < json.count, json[reference.offset..<senderStart].elementsEqual(userKey),
              let senderEnd = objectEnd(in: json, from: senderStart) else {
            throw corrupt("no user where its message object goes")
        }
        var object = JSONWriter(capacity: reference.length)
        write(message: message, replyCount: 0, into: &object) { writer in writer.raw(json[senderStart..<senderEnd]) }
        guard object.count == reference.length else {
            throw corrupt("message \(reference.position) of \(event.cid.map(\.description) ?? "no channel") written again is \(object.count) bytes, not \(reference.length)")
        }
        var whole: [UInt8] = []
        whole.reserveCapacity(json.count + object.count)
        whole.append(contentsOf: json[..<reference.offset])
        whole.append(contentsOf: object.bytes)
        whole.append(contentsOf: json[reference.offset...])
        return whole
    }

    /// `event` with ``wholeJSON(of:)`` as its JSON and no message reference left.
    package static func whole(_ event: JournalEvent) throws(StorageError) -> JournalEvent {
        guard event.message != nil else { return event }
        var whole = event
        whole.json = try wholeJSON(of: event)
        whole.message = nil
        return whole
    }

    private static let userKey = Array(#","user":"#.utf8)

    /// The end (one past the closing brace) of the JSON object starting at `start`, or nil when there
    /// is none: braces in strings and escaped quotes do not count.
    private static func objectEnd(in json: [UInt8], from start: Int) -> Int? {
        guard start < json.count, json[start] == UInt8(ascii: "{") else { return nil }
        var depth = 0
        var inString = false
        var escaped = false
        var index = start
        while index < json.count {
            let byte = json[index]
            index += 1
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return index }
            default: break
            }
        }
        return nil
    }
}
