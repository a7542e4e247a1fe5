import CheckmarkCore
import CheckmarkStorage
import CheckmarkWire
import Foundation

/// Reading history as trace lines: a trace file, or a data directory's journal.
package enum TraceFile {
    /// Why history could not be read.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Every line of a trace file (JSON lines), in order.
    /// - Throws: ``Failure`` for an unreadable file, ``TraceLine/Failure`` naming the first bad line.
    package static func lines(atPath path: String) throws -> [TraceLine] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot read \(path)") }
        var lines: [TraceLine] = []
        var number = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if raw.isEmpty { continue }
            lines.append(try TraceLine.parse(raw, number: number))
        }
        return lines
    }

    /// A data directory's whole journal as trace lines (events name their audience, not connections),
    /// led by a `pruned` line when retention removed part of it. Takes the directory's lock: the
    /// server using it must be stopped.
    /// - Throws: ``Failure`` when the directory holds no database, or the storage errors of opening it.
    package static func journalLines(dataDirectory path: String) throws -> [TraceLine] {
        guard FileManager.default.fileExists(atPath: path + "/" + DataDirectory.databaseFileName) else {
            throw Failure(description: "\(path) holds no Checkmark database")
        }
        let store = try SQLiteStore(directory: try DataDirectory(path: path))
        defer { store.close() }
        let pruned = try store.prunedHistory()
        var lines: [TraceLine] = pruned.isEmpty ? [] : [.pruned(pruned)]
        var after: Int64 = 0
        while true {
            let entries = try store.journal(after: after, limit: 10_000)
            guard let last = entries.last else { break }
            for entry in entries {
                lines.append(.command(seq: entry.seq, at: entry.at, command: entry.command))
                for event in entry.events {
                    lines.append(.event(TraceEvent(
                        commandSeq: entry.seq, type: event.type, cid: event.cid, channelSeq: event.channelSeq,
                        audience: event.audience, recipients: nil, json: try StreamJSON.wholeJSON(of: event))))
                }
            }
            after = last.seq
        }
        return lines
    }
}
