/// A JSON object inside an event's whole JSON that the journal keeps elsewhere, once
/// (``JournaledMessage``, ``JournaledChannel``): where it is, and the JSON without it.
enum EmbeddedObject {
    /// Whether `json` has an object at `offset` of `length` bytes (braces at both ends).
    static func fits(_ json: [UInt8], offset: Int, length: Int) -> Bool {
        offset >= 0 && length >= 2 && offset + length <= json.count
            && json[offset] == UInt8(ascii: "{") && json[offset + length - 1] == UInt8(ascii: "}")
    }

    /// `json` without the `length` bytes at `offset`: what the store writes.
    static func cut(_ json: [UInt8], offset: Int, length: Int) -> [UInt8] {
        var stored: [UInt8] = []
        stored.reserveCapacity(json.count - length)
        stored.append(contentsOf: json[..<offset])
        stored.append(contentsOf: json[(offset + length)...])
        return stored
    }
}
