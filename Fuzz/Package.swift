// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets for the codec: build and run with `scripts/fuzz.sh` (swiftc -sanitize=fuzzer).
let package = Package(
    name: "checkmark-fuzz",
    dependencies: [
        // `root` is a link to the repository, so the package identity does not depend on the clone's folder name.
        .package(path: "root"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .target(name: "FuzzSupport"),
        .executableTarget(
            name: "FuzzFrames",
            dependencies: [
                "FuzzSupport",
                .product(name: "CheckmarkWebSocket", package: "root"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "FuzzHandshake",
            dependencies: ["FuzzSupport", .product(name: "CheckmarkWebSocket", package: "root")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
