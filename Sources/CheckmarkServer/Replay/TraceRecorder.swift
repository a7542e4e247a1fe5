import CheckmarkCore
import Foundation

/// Writes a live trace (``TraceLine``) of everything a server accepts: each command the engine
/// applied, with its time, and each event with the connections that received it and their counts.
/// Called on the engine's event loop only; lines reach the file in apply order, buffered, and are
/// flushed at ``close()``. A write error (a full disk) stops the recording, never the server:
/// ``write(_:)`` then returns the reason once, for the caller to log.
package final class TraceRecorder: @unchecked Sendable {
    private let file: UnsafeMutablePointer<FILE>
    private var closed = false
    package let path: String

    /// Creates (or truncates) `path`.
    /// - Throws: ``Failure`` when the file cannot be created.
    package init(path: String) throws(Failure) {
        guard let file = fopen(path, "w") else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        self.file = file
        self.path = path
    }

    package struct Failure: Error, CustomStringConvertible {
        package var path: String
        package var reason: String
        package var description: String { "cannot record a trace to \(path): \(reason)" }
    }

    /// The trace lines of one applied command (numbered `seq`) and the events it produced, each with
    /// its channel sequence and shared JSON.
    static func lines(seq: Int64, _ command: ReceiptsCommand, at: Timestamp, events: [(ReceiptsEvent, Int64?, [UInt8])]) -> [[UInt8]] {
        var lines = [TraceLine.command(seq: seq, at: at, command: command).json]
        for (event, channelSeq, json) in events {
            lines.append(TraceLine.event(TraceEvent(
                commandSeq: seq, type: event.type, cid: event.cid, channelSeq: channelSeq, audience: event.audience,
                recipients: event.recipients.map(TracedRecipient.init), json: json)).json)
        }
        return lines
    }

    /// Appends lines to the file, each followed by a newline. Returns why recording stopped, the
    /// first time a write fails; nil otherwise.
    func write(_ lines: [[UInt8]]) -> String? {
        guard !closed else { return nil }
        for bytes in lines {
            var line = bytes
            line.append(UInt8(ascii: "\n"))
            let written = line.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            if written != line.count {
                let reason = String(cString: strerror(errno))
                close()
                return "writing the trace to \(path) failed (\(reason)); recording stopped"
            }
        }
        return nil
    }

    /// Flushes and closes the file; later records are ignored.
    package func close() {
        guard !closed else { return }
        closed = true
        fflush(file)
        fclose(file)
    }
}
