// swift-tools-version: 6.1
import PackageDescription

// Micro-benchmarks (package-benchmark): `cd Benchmarks && swift package benchmark`.
// Thresholds for CI live in Thresholds/.
let package = Package(
    name: "checkmark-benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // `root` is a link to the repository, so the package identity does not depend on the clone's folder name.
        .package(path: "root"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.0", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CheckmarkWebSocket", package: "root"),
                .product(name: "NIOCore", package: "swift-nio"),
                // SwiftNIO's own WebSocket decoder, measured beside ours on the same frames.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "FanOutBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CheckmarkWebSocket", package: "root"),
                .product(name: "CheckmarkWebSocketNIO", package: "root"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Benchmarks/FanOutBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "CoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "CheckmarkCore", package: "root"),
                .product(name: "CheckmarkWire", package: "root"),
            ],
            path: "Benchmarks/CoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
