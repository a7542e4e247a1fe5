import Foundation

/// Pins this process's threads to a set of CPUs (with util-linux's `taskset`), so that the harness
/// and a local server do not compete for the same core. Threads started later inherit the set from
/// the thread that starts them; call it again after starting thread pools.
package enum CPUAffinity {
    /// Online CPUs.
    package static var count: Int { ProcessInfo.processInfo.activeProcessorCount }

    /// False when `taskset` is missing or refused.
    @discardableResult
    package static func pinProcess(toCPUs cpus: [Int]) -> Bool {
        let taskset = "/usr/bin/taskset"
        guard FileManager.default.isExecutableFile(atPath: taskset) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: taskset)
        process.arguments = ["-a", "-p", "-c", cpus.map(String.init).joined(separator: ","), String(getpid())]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
