import CheckmarkCore
import Foundation
import Logging

/// The `log_format = json` handler: one JSON object a line, written whole with one `write(2)`:
/// `time` (RFC 3339, UTC, milliseconds), `level`, `label`, `message`, then every metadata item as a
/// field of its own (strings; lists and dictionaries as JSON arrays and objects). A metadata key
/// that would shadow one of the four fixed fields is written with a `meta_` prefix.
package struct JSONLogHandler: LogHandler {
    package var logLevel: Logger.Level = .info
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let write: @Sendable (String) -> Void

    /// Fields every line has; metadata may not use these names as they are.
    static let fixedFields: Set<String> = ["time", "level", "label", "message"]

    /// A handler writing each line (with its newline) through `write`; standard error by default.
    package init(label: String, metadataProvider: Logger.MetadataProvider? = nil,
                write: @escaping @Sendable (String) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    package static let standardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data(line.utf8))
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let given = event.metadata { all.merge(given) { _, new in new } }
        write(Self.line(time: WallClock.now(), level: event.level, label: label, message: event.message.description, metadata: all))
    }

    /// The line for one event (with its trailing newline); metadata fields in key order.
    static func line(time: Timestamp, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("time", millisecondRFC3339(time))
        w.field("level", level.rawValue)
        w.field("label", label)
        w.field("message", message)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            w.key(fixedFields.contains(key) ? "meta_" + key : key)
            write(value, into: &w)
        }
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self) + "\n"
    }

    /// `2026-01-02T03:04:05.678Z`.
    static func millisecondRFC3339(_ time: Timestamp) -> String {
        let micro = time.rfc3339
        return String(micro.dropLast(4)) + "Z"
    }

    private static func write(_ value: Logger.Metadata.Value, into w: inout JSONWriter) {
        switch value {
        case .string(let text): w.string(text)
        case .stringConvertible(let convertible): w.string(convertible.description)
        case .array(let values):
            w.beginArray()
            for value in values { write(value, into: &w) }
            w.endArray()
        case .dictionary(let values):
            w.beginObject()
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                w.key(key)
                write(value, into: &w)
            }
            w.endObject()
        }
    }
}
