import CCheckmarkBuild

/// What this binary is: the release version (`checkmark --version`, `checkmark_build_info`) and the
/// commit it was built from, which only `scripts/release.sh` records ("unknown" otherwise).
package enum BuildInfo {
    /// The version of this source tree; CHANGELOG.md says what each version holds.
    package static let version = "0.1.0"

    /// The commit the binary was built from, or "unknown" when it was not built by the release script.
    package static let commit = String(cString: checkmark_build_commit())

    /// `checkmark 0.1.0 (commit 1ab6171)`.
    package static var description: String { "checkmark \(version) (commit \(commit))" }
}
