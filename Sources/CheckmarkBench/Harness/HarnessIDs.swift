/// The ids the harness gives users and messages, so that a receiver can read from an event who
/// sent it and when it was meant to be sent, without any shared table: users are `u<index>`,
/// messages `m<author index>s<sequence>t<scheduled send time in µs>`.
package enum HarnessIDs {
    package static func user(_ index: Int) -> String { "u\(index)" }

    package static func message(author: Int, sequence: Int, scheduledNanoseconds: UInt64) -> String {
        "m\(author)s\(sequence)t\(scheduledNanoseconds / 1_000)"
    }

    /// The author index of a harness message id.
    package static func author(ofMessage id: UnsafeRawBufferPointer) -> Int? {
        EventScan.number(after: UInt8(ascii: "m"), in: id).map { Int($0) }
    }

    /// The scheduled send time (ns) of a harness message id.
    package static func scheduledNanoseconds(ofMessage id: UnsafeRawBufferPointer) -> UInt64? {
        EventScan.number(after: UInt8(ascii: "t"), in: id).map { $0 * 1_000 }
    }

    /// The index of a harness user id.
    package static func userIndex(_ id: UnsafeRawBufferPointer) -> Int? {
        EventScan.number(after: UInt8(ascii: "u"), in: id).map { Int($0) }
    }
}
