import Foundation

/// A process's CPU time, resident memory and open descriptors from /proc (Linux): what `/metrics`
/// exposes under Prometheus's standard `process_*` names, and what the load harness samples.
package struct ProcessStatistics: Sendable, Equatable {
    /// User plus system CPU seconds used so far.
    package var cpuSeconds: Double
    package var residentBytes: Int
    /// Open file descriptors (sockets included); nil when /proc/PID/fd cannot be listed.
    package var openFileDescriptors: Int?

    package init(cpuSeconds: Double, residentBytes: Int, openFileDescriptors: Int?) {
        self.cpuSeconds = cpuSeconds
        self.residentBytes = residentBytes
        self.openFileDescriptors = openFileDescriptors
    }

    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// Reads `pid` (this process by default); nil where /proc is missing or unreadable.
    package static func read(pid: Int32 = getpid(), countingDescriptors: Bool = false) -> ProcessStatistics? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command name: field 3 (state) first; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        var resident = 0
        if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
           let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") {
            resident = kilobytes * 1024
        }
        let descriptors = countingDescriptors ? (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count : nil
        return ProcessStatistics(cpuSeconds: (user + system) / ticksPerSecond, residentBytes: resident, openFileDescriptors: descriptors)
    }

    /// The Prometheus text exposition of these figures (`process_cpu_seconds_total`,
    /// `process_resident_memory_bytes`, `process_open_fds`).
    package var prometheusText: String {
        var text = """
        # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
        # TYPE process_cpu_seconds_total counter
        process_cpu_seconds_total \(cpuSeconds)
        # HELP process_resident_memory_bytes Resident memory size in bytes.
        # TYPE process_resident_memory_bytes gauge
        process_resident_memory_bytes \(residentBytes)

        """
        if let openFileDescriptors {
            text += """
            # HELP process_open_fds Number of open file descriptors.
            # TYPE process_open_fds gauge
            process_open_fds \(openFileDescriptors)

            """
        }
        return text
    }
}
