import Foundation

/// A fresh directory under the system's temporary folder, removed by ``remove()``.
struct TemporaryDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "checkmark-test-" + UUID().uuidString
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
