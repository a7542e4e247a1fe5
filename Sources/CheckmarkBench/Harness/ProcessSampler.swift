import CheckmarkServer
import Foundation

/// CPU and memory of a process over time: read from /proc for a process on this machine (the local
/// server, `--server-pid`, the harness itself), or from a remote server's `/metrics`.
package struct ProcessSampler: Sendable {
    package enum Source: Sendable {
        case process(Int32)
        case metrics(BenchHTTPClient)
    }

    package let source: Source

    package init(pid: Int32) {
        source = .process(pid)
    }

    package init(metrics client: BenchHTTPClient) {
        source = .metrics(client)
    }

    package static var current: ProcessSampler { ProcessSampler(pid: getpid()) }

    /// A reading: CPU seconds used so far (user + system), resident memory, and when it was taken.
    package struct Reading: Sendable {
        package var cpuSeconds: Double
        package var residentBytes: Int
        package var at: UInt64
    }

    package func read() async -> Reading? {
        switch source {
        case .process(let pid):
            return readLocal(pid)
        case .metrics(let client):
            let values = await client.metrics()
            guard let cpu = values["process_cpu_seconds_total"], let resident = values["process_resident_memory_bytes"] else { return nil }
            return Reading(cpuSeconds: cpu, residentBytes: Int(resident), at: BenchClock.now())
        }
    }

    /// The /proc reading, without waiting (local processes only).
    package func readLocal(_ pid: Int32) -> Reading? {
        ProcessStatistics.read(pid: pid).map { Reading(cpuSeconds: $0.cpuSeconds, residentBytes: $0.residentBytes, at: BenchClock.now()) }
    }

    /// CPU use between two readings, in cores (1.0 = one core busy).
    package static func cores(from a: Reading, to b: Reading) -> Double {
        let seconds = Double(b.at &- a.at) / 1e9
        return seconds > 0 ? (b.cpuSeconds - a.cpuSeconds) / seconds : 0
    }
}
