import CheckmarkServer
import Foundation
import Testing

/// The version a binary reports is a semantic version that CHANGELOG.md describes, and
/// `checkmark --version` prints it with the commit.
@Suite("Version and build information")
struct BuildInfoTests {
    static var changelogURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../CHANGELOG.md").standardized
    }

    @Test func versionIsASemanticVersion() {
        let parts = BuildInfo.version.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3, "\(BuildInfo.version) is not MAJOR.MINOR.PATCH")
        for part in parts {
            #expect(!part.isEmpty && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber), "\(BuildInfo.version)")
            #expect(part == "0" || !part.hasPrefix("0"), "\(BuildInfo.version) has a leading zero")
        }
    }

    @Test func changelogHasAHeadingForTheVersion() throws {
        let changelog = try String(contentsOf: Self.changelogURL, encoding: .utf8)
        let headings = changelog.split(separator: "\n").filter { $0.hasPrefix("## [") }
        #expect(headings.contains { $0.hasPrefix("## [\(BuildInfo.version)]") }, "CHANGELOG.md has no \"## [\(BuildInfo.version)]\" heading")
    }

    @Test func versionOptionPrintsVersionAndCommit() throws {
        guard FileManager.default.isExecutableFile(atPath: ServerProcess.binary) else {
            throw ServerProcess.Failure.binaryMissing(ServerProcess.binary)
        }
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        process.arguments = ["--version"]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines) == BuildInfo.description)
        #expect(BuildInfo.description.hasPrefix("checkmark \(BuildInfo.version) (commit "))
    }
}
