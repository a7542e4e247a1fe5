import CheckmarkCore
import CheckmarkWire

/// A recorded trace made ready to re-run: its commands in order, and per recorded connection the
/// events it received. Compares what a re-run delivered with that, times normalised. Pure.
package struct ReplayPlan: Sendable {
    /// Why a trace cannot be run.
    package struct Unrunnable: Error, CustomStringConvertible {
        package var description: String
    }

    package var commands: [(seq: Int64, at: Timestamp, command: ReceiptsCommand)] = []
    /// Per recorded connection, the events it received, normalised.
    package var expected: [String: [JSONValue]] = [:]
    /// Recorded connection id to user id.
    package var users: [String: String] = [:]

    /// - Throws: ``Unrunnable`` when an event has no recipients (a trace exported from a journal).
    package init(_ lines: [TraceLine]) throws(Unrunnable) {
        for line in lines {
            switch line {
            case .command(let seq, let at, let command):
                commands.append((seq, at, command))
                if case .connect(let connectionID, let userID) = command { users[connectionID] = userID }
            case .event(let event):
                guard let recipients = event.recipients else {
                    throw Unrunnable(description: "event of command \(event.commandSeq) has no recipients: run takes a trace recorded live (checkmark serve --set record=FILE), not one exported from a journal")
                }
                for recipient in recipients {
                    expected[recipient.connectionID, default: []].append(Self.normalised(event.json(for: recipient.counts)))
                }
            case .pruned:
                throw Unrunnable(description: "the trace is a journal export, and part of that journal was pruned: run takes a trace recorded live (checkmark serve --set record=FILE)")
            }
        }
    }

    /// Seconds to wait before command `index` to keep the recorded pace times `speed` (nil: as fast
    /// as possible).
    package func pause(before index: Int, speed: Double?) -> Double? {
        guard let speed, speed > 0, index > 0 else { return nil }
        let gap = Double(commands[index].at.rawValue - commands[index - 1].at.rawValue) / 1e6 / speed
        return gap > 0 ? gap : nil
    }

    /// How many events the connection should receive in all.
    package func expectedCount(_ connectionID: String) -> Int { expected[connectionID]?.count ?? 0 }

    /// Compares what each connection received (normalised) with the recording, adding one readable
    /// difference per connection that differs.
    package func compare(received: [String: [JSONValue]], into report: inout ReplayReport) {
        for connectionID in Set(expected.keys).union(received.keys).sorted() {
            let want = expected[connectionID] ?? []
            let got = received[connectionID] ?? []
            report.connections += 1
            report.eventsCompared += max(want.count, got.count)
            if let difference = Self.difference(want, got, who: "connection \(connectionID) (\(users[connectionID] ?? "unknown user"))") {
                report.differences.append(difference)
            }
        }
    }

    /// The first difference between what a connection should have received and what it did, in words.
    static func difference(_ want: [JSONValue], _ got: [JSONValue], who: String) -> String? {
        for index in 0..<max(want.count, got.count) {
            let expected = index < want.count ? want[index] : nil
            let actual = index < got.count ? got[index] : nil
            if expected == actual { continue }
            return "\(who), event \(index + 1) of \(want.count) recorded (\(got.count) replayed):\n"
                + "  - recorded: \(expected.map(Self.text) ?? "nothing")\n  + replayed: \(actual.map(Self.text) ?? "nothing")"
        }
        return nil
    }

    /// The event with every RFC 3339 time replaced by `<time>`.
    package static func normalised(_ bytes: [UInt8]) -> JSONValue {
        guard let value = try? JSONParser.parse(bytes, limits: .stored) else { return .string(String(decoding: bytes, as: UTF8.self)) }
        return normalised(value)
    }

    package static func normalised(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text) where Timestamp(rfc3339: text) != nil: .string("<time>")
        case .array(let items): .array(items.map(normalised))
        case .object(let fields): .object(fields.map { ($0.0, normalised($0.1)) })
        default: value
        }
    }

    static func text(_ value: JSONValue) -> String {
        var w = JSONWriter()
        w.value(value)
        let text = String(decoding: w.bytes, as: UTF8.self)
        return text.count > 400 ? String(text.prefix(400)) + "..." : text
    }
}
