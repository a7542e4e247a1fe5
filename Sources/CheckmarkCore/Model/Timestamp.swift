/// A point in time with microsecond precision, as microseconds since 1970-01-01T00:00:00Z.
/// The core has no clock: every command carries the time it happens at.
public struct Timestamp: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(microseconds: Int64) { rawValue = microseconds }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The next representable instant.
    public var successor: Timestamp { Timestamp(rawValue: rawValue + 1) }
    public var predecessor: Timestamp { Timestamp(rawValue: rawValue - 1) }

    /// RFC 3339 in UTC with six fractional digits, e.g. `2026-11-22T02:38:17.123456Z`.
    public var rfc3339: String {
        let civil = CivilTime(self)
        guard civil.hasFourDigitYear else { return civil.generalText }
        return String(unsafeUninitializedCapacity: CivilTime.textLength) { buffer in
            civil.write(into: buffer)
            return CivilTime.textLength
        }
    }

    /// Appends ``rfc3339``'s bytes to `bytes`: what the JSON writers call, with no string between.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        let civil = CivilTime(self)
        guard civil.hasFourDigitYear else { return bytes.append(contentsOf: civil.generalText.utf8) }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: CivilTime.textLength))
        bytes.withUnsafeMutableBufferPointer { all in
            civil.write(into: UnsafeMutableBufferPointer(rebasing: all[start...]))
        }
    }

    /// The calendar fields of a timestamp in UTC.
    private struct CivilTime {
        /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`
        static let textLength = 27
        var year: Int64, month: Int64, day: Int64, secondOfDay: Int64, micros: Int64

        init(_ time: Timestamp) {
            var micros = time.rawValue % 1_000_000
            var seconds = time.rawValue / 1_000_000
            if micros < 0 {
                micros += 1_000_000
                seconds -= 1
            }
            var days = seconds / 86_400
            var secondOfDay = seconds % 86_400
            if secondOfDay < 0 {
                secondOfDay += 86_400
                days -= 1
            }
            // Civil-from-days (proleptic Gregorian), after Howard Hinnant's well-known algorithm.
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let dayOfEra = z - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let mp = (5 * dayOfYear + 2) / 153
            day = dayOfYear - (153 * mp + 2) / 5 + 1
            month = mp < 10 ? mp + 3 : mp - 9
            year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
            self.secondOfDay = secondOfDay
            self.micros = micros
        }

        /// Whether the fixed-width form applies (years 0 to 9999, every real timestamp).
        var hasFourDigitYear: Bool { (0...9999).contains(year) }

        /// Writes the fixed-width text into exactly ``textLength`` bytes.
        func write(into buffer: UnsafeMutableBufferPointer<UInt8>) {
            func digits(_ value: Int64, _ count: Int, at offset: Int) {
                var rest = value
                for index in stride(from: offset + count - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            digits(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            digits(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            digits(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            digits(secondOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            digits(secondOfDay / 60 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            digits(secondOfDay % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: ".")
            digits(micros, 6, at: 20)
            buffer[26] = UInt8(ascii: "Z")
        }

        /// The text for any year, as it has always been written (years outside 0-9999 unpadded).
        var generalText: String {
            func pad(_ value: Int64, _ width: Int) -> String {
                let text = String(value)
                return String(repeating: "0", count: max(0, width - text.count)) + text
            }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
                + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(micros, 6))Z"
        }
    }

    /// Parses RFC 3339 (`Z` or a numeric offset, any number of fractional digits, kept to microseconds).
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[from..<(from + count)] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard bytes.count >= 20, bytes[4] == 45, bytes[7] == 45, bytes[10] == 84 || bytes[10] == 116 || bytes[10] == 32,
              bytes[13] == 58, bytes[16] == 58,
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var micros: Int64 = 0
        if index < bytes.count, bytes[index] == 46 {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int64(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetSeconds: Int64 = 0
        if bytes[index] == 90 || bytes[index] == 122 {
            index += 1
        } else if bytes[index] == 43 || bytes[index] == 45 {
            guard let oh = number(index + 1, 2), bytes.count > index + 3, bytes[index + 3] == 58,
                  let om = number(index + 4, 2) else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (bytes[index] == 45 ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        // Days-from-civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * mp + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        rawValue = seconds * 1_000_000 + micros
    }

    public var description: String { rfc3339 }
}
