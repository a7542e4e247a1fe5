import Foundation

/// CPU and memory of a process from /proc (Linux): the local server's, and the harness's own.
public struct ProcessSampler: Sendable {
    public let pid: Int32
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    public init(pid: Int32) {
        self.pid = pid
    }

    public static var current: ProcessSampler { ProcessSampler(pid: getpid()) }

    /// A reading: CPU seconds used so far (user + system) and resident memory in bytes.
    public struct Reading: Sendable {
        public var cpuSeconds: Double
        public var residentBytes: Int
        public var at: UInt64
    }

    public func read() -> Reading? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        var resident = 0
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
           let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") {
            resident = kilobytes * 1024
        }
        return Reading(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: resident, at: BenchClock.now())
    }

    /// CPU use between two readings, in cores (1.0 = one core busy).
    public static func cores(from a: Reading, to b: Reading) -> Double {
        let seconds = Double(b.at &- a.at) / 1e9
        return seconds > 0 ? (b.cpuSeconds - a.cpuSeconds) / seconds : 0
    }
}
