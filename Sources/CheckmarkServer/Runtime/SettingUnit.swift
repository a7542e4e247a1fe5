/// The unit a numeric setting is kept in, and how its value may be written in a config file, an
/// environment variable or a flag: a bare number is in the setting's own unit (as documented);
/// durations also take `500ms`, `5s`, `2m`, `1h`, sizes `64KiB`, `4MiB`, `1GiB`. Pure.
package enum SettingUnit: Sendable, Equatable {
    /// A count, a rate: a whole number.
    case count
    case seconds
    case milliseconds
    case bytes

    /// What the README and `--help` call it.
    package var name: String {
        switch self {
        case .count: "count"
        case .seconds: "seconds (or 500ms, 5s, 2m, 1h)"
        case .milliseconds: "milliseconds (or 500ms, 5s, 2m, 1h)"
        case .bytes: "bytes (or 64KiB, 4MiB, 1GiB)"
        }
    }

    /// `text` in this unit, or why it cannot be (`must be ..., not 'x'`; without the key or source).
    package func parse(_ text: String) -> Result<Int, Refusal> {
        let trimmed = Substring(text)
        let digits = trimmed.prefix { $0.isNumber || $0 == "-" }
        let suffix = trimmed.dropFirst(digits.count)
        guard let number = Int(digits) else { return .failure(Refusal(reason: "must be \(expected), not '\(text)'")) }
        let multiplier: Int
        let divisor: Int
        switch (self, suffix) {
        case (_, ""): return .success(number)
        case (.seconds, "ms"): (multiplier, divisor) = (1, 1000)
        case (.seconds, "s"): (multiplier, divisor) = (1, 1)
        case (.seconds, "m"): (multiplier, divisor) = (60, 1)
        case (.seconds, "h"): (multiplier, divisor) = (3600, 1)
        case (.milliseconds, "ms"): (multiplier, divisor) = (1, 1)
        case (.milliseconds, "s"): (multiplier, divisor) = (1000, 1)
        case (.milliseconds, "m"): (multiplier, divisor) = (60_000, 1)
        case (.milliseconds, "h"): (multiplier, divisor) = (3_600_000, 1)
        case (.bytes, "B"): (multiplier, divisor) = (1, 1)
        case (.bytes, "KiB"): (multiplier, divisor) = (1 << 10, 1)
        case (.bytes, "MiB"): (multiplier, divisor) = (1 << 20, 1)
        case (.bytes, "GiB"): (multiplier, divisor) = (1 << 30, 1)
        default: return .failure(Refusal(reason: "must be \(expected), not '\(text)'"))
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return .failure(Refusal(reason: "is too large: '\(text)'")) }
        guard product % divisor == 0 else { return .failure(Refusal(reason: "must be a whole number of seconds, not '\(text)'")) }
        return .success(product / divisor)
    }

    /// Why a value is refused: `must be ..., not 'x'`.
    package struct Refusal: Error, Sendable {
        package var reason: String
    }

    private var expected: String {
        switch self {
        case .count: "a whole number"
        case .seconds, .milliseconds: "a duration (a whole number of \(self == .seconds ? "seconds" : "milliseconds"), or with ms, s, m or h)"
        case .bytes: "a size (a whole number of bytes, or with KiB, MiB or GiB)"
        }
    }
}
