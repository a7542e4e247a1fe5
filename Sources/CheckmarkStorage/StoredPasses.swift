import CheckmarkCore
import Foundation

/// The stored form of a read state's pointer passes in a member's row (PostgreSQL's `members`, and
/// SQLite's before schema v5, whose migration reads it): a blob of 16-byte records, position and
/// time, each a little-endian 64-bit integer.
enum StoredPasses {
    static func encode(_ passes: some Collection<PointerPass>) -> Data {
        var data = Data(count: passes.count * 16)
        data.withUnsafeMutableBytes { raw in
            for (index, pass) in passes.enumerated() {
                raw.storeBytes(of: Int64(pass.position).littleEndian, toByteOffset: index * 16, as: Int64.self)
                raw.storeBytes(of: pass.at.rawValue.littleEndian, toByteOffset: index * 16 + 8, as: Int64.self)
            }
        }
        return data
    }

    /// - Throws: ``StorageError/corrupt(path:reason:)`` for a blob that is not whole records.
    static func decode(_ data: Data) throws(StorageError) -> PointerPasses {
        guard data.count % 16 == 0 else { throw .corrupt(path: "", reason: "pointer passes of \(data.count) bytes") }
        return data.withUnsafeBytes { raw in
            PointerPasses((0..<data.count / 16).lazy.map { index in
                PointerPass(
                    position: Int(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 16, as: Int64.self))),
                    at: Timestamp(rawValue: Int64(littleEndian: raw.loadUnaligned(fromByteOffset: index * 16 + 8, as: Int64.self))))
            })
        }
    }
}
