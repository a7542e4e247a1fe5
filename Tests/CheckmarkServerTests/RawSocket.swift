#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP socket to 127.0.0.1 for tests that must send exactly the bytes they choose,
/// however wrong.
final class RawSocket {
    let fd: Int32

    /// - Parameter receiveBufferSize: when set, the kernel's receive buffer is shrunk to it before
    ///   connecting (a client that reads slowly then stalls its peer sooner).
    init(port: Int, receiveBufferSize: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError.failed("socket") }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw RawSocketError.failed("connect")
        }
        setTimeout(seconds: 5)
    }

    deinit { close(fd) }

    func setTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends `bytes`; returns false when the peer refused some of them (it closed or reset).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads until the peer closes, the timeout passes, or `limit` bytes arrived.
    func readAll(limit: Int = 1 << 20) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while out.count < limit {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    /// Reads until `marker` appears (or the timeout passes).
    func read(until marker: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            out.append(byte)
            if out.count >= marker.count && Array(out.suffix(marker.count)) == marker { break }
        }
        return out
    }

    /// Whether the peer has closed the connection (EOF within the timeout).
    func peerClosed() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}

enum RawSocketError: Error {
    case failed(String)
}

/// Open file descriptors and resident memory of this process, from /proc.
enum ProcessResources {
    /// Open sockets of this process (other descriptors, such as the storage tests' database files
    /// in suites running alongside, do not count).
    static func openFileDescriptors() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(dir) }
        var count = 0
        var target = [CChar](repeating: 0, count: 256)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name != ".", name != ".." else { continue }
            let length = readlink("/proc/self/fd/" + name, &target, target.count - 1)
            guard length > 0 else { continue }
            if String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self).hasPrefix("socket:") { count += 1 }
        }
        return count
    }

    static func residentBytes() -> Int {
        guard let file = fopen("/proc/self/statm", "r") else { return -1 }
        defer { fclose(file) }
        var size = 0
        var resident = 0
        _ = withUnsafeMutablePointer(to: &size) { s in
            withUnsafeMutablePointer(to: &resident) { r in
                withVaList([s, r]) { vfscanf(file, "%ld %ld", $0) }
            }
        }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
