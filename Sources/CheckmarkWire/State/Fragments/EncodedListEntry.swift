import CheckmarkCore

/// An entry of a JSON array that ``EncodedList`` keeps encoded: equal entries must encode to equal
/// bytes (so text is compared byte for byte, not as Swift's `String ==` does), and an entry equal to
/// the one encoded before is not encoded again.
package protocol EncodedListEntry: Equatable, Sendable {
    /// Which entry this is, across versions of the list (a user id).
    var key: String { get }
    /// Writes the entry as one array element, or nothing when it takes no place in the array.
    func encode(into writer: inout JSONWriter)
}
