#if canImport(Glibc)
import Glibc
#endif

/// The process environment.
enum Environment {
    static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
