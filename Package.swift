// swift-tools-version: 6.2
// 6.2: swift-log, swift-prometheus, swift-service-lifecycle and swift-collections need it. Every
// dependency is pinned to the version the build resolves (README, "Dependencies"): two builds a month
// apart build the same code.
import PackageDescription

/// Upcoming features every target opts into: explicit `any` and imports that say what they use.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "checkmark",
    products: [
        .executable(name: "checkmark", targets: ["checkmark"]),
        .library(name: "CheckmarkWebSocket", targets: ["CheckmarkWebSocket"]),
        .library(name: "CheckmarkCore", targets: ["CheckmarkCore"]),
        .library(name: "CheckmarkWire", targets: ["CheckmarkWire"]),
        .library(name: "CheckmarkClient", targets: ["CheckmarkClient"]),
        .library(name: "CheckmarkWebSocketNIO", targets: ["CheckmarkWebSocketNIO"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-atomics.git", exact: "1.3.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", exact: "2.0.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        // System libraries from Debian: zlib1g-dev (permessage-deflate), libssl-dev (SHA-1, HMAC).
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CLibcrypto", providers: [.apt(["libssl-dev"])]),
        // The commit a release binary was built from (scripts/release.sh defines it).
        .target(name: "CCheckmarkBuild"),
        // Freed memory given back to the system (glibc's malloc_trim, which Swift's Glibc does not export).
        .target(name: "CCheckmarkMemory"),
        // SQLite's process-wide settings, whose C function Swift cannot call (libsqlite3-dev).
        .target(name: "CSQLiteConfig", linkerSettings: [.linkedLibrary("sqlite3")]),

        // Pure cores: no I/O, no clocks, no randomness of their own.
        .target(
            name: "CheckmarkWebSocket",
            dependencies: [
                "CZlib", "CLibcrypto",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(name: "CheckmarkCore", swiftSettings: strictSettings),
        .target(name: "CheckmarkAuth", dependencies: ["CheckmarkCore", "CLibcrypto"], swiftSettings: strictSettings),
        // Stream's wire format above the rules: events, channel state, requests, errors and envelopes.
        .target(
            name: "CheckmarkWire",
            dependencies: ["CheckmarkCore", "CheckmarkAuth", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),

        // Shells: sockets, event loops, storage, HTTP.
        .target(
            name: "CheckmarkWebSocketNIO",
            dependencies: [
                "CheckmarkWebSocket",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CheckmarkStorage",
            dependencies: [
                "CheckmarkCore", "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CheckmarkServer",
            dependencies: [
                "CheckmarkWebSocket", "CheckmarkWebSocketNIO", "CheckmarkCore", "CheckmarkWire", "CheckmarkAuth", "CheckmarkStorage", "CCheckmarkBuild",
                "CCheckmarkMemory",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CheckmarkClient",
            dependencies: [
                "CheckmarkWebSocket", "CheckmarkWebSocketNIO", "CheckmarkCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The load harness behind `checkmark bench`.
        .target(
            name: "CheckmarkBench",
            dependencies: [
                "CheckmarkClient", "CheckmarkServer", "CheckmarkWebSocketNIO", "CheckmarkWebSocket", "CheckmarkAuth", "CheckmarkCore", "CheckmarkWire",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "checkmark",
            dependencies: [
                "CheckmarkBench", "CheckmarkServer", "CheckmarkClient", "CheckmarkWebSocketNIO", "CheckmarkAuth", "CheckmarkStorage", "CheckmarkCore", "CheckmarkWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "CheckmarkWebSocketTests",
            dependencies: ["CheckmarkWebSocket", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        // The engine transcript driver (`Scenario`) the core and wire tests share.
        .target(name: "CheckmarkTestSupport", dependencies: ["CheckmarkCore", .product(name: "Logging", package: "swift-log")],
                path: "Tests/Support", swiftSettings: strictSettings),
        .testTarget(
            name: "CheckmarkCoreTests",
            dependencies: ["CheckmarkCore", "CheckmarkTestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckmarkWireTests",
            dependencies: ["CheckmarkWire", "CheckmarkCore", "CheckmarkTestSupport", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckmarkAuthTests",
            dependencies: ["CheckmarkAuth", "CheckmarkCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckmarkStorageTests",
            dependencies: ["CheckmarkStorage", "CheckmarkCore", "CheckmarkTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckmarkBenchTests",
            dependencies: [
                "CheckmarkBench", "CheckmarkServer", "CheckmarkClient", "CheckmarkCore", "CheckmarkWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CheckmarkServerTests",
            dependencies: [
                "CheckmarkServer", "CheckmarkClient", "CheckmarkWebSocketNIO", "CheckmarkStorage", "CheckmarkCore", "CheckmarkWire", "CheckmarkAuth",
                "CheckmarkTestSupport", "CCheckmarkMemory", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
