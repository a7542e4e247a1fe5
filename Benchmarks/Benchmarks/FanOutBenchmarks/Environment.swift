#if canImport(Glibc)
import Glibc
#endif

enum Environment {
    /// True when the BENCHMARK_CI environment variable is set (by `.ci/run`).
    static let isCI = getenv("BENCHMARK_CI") != nil
}
