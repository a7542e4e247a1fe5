#!/usr/bin/env bash
# Builds the release binary that can be copied to another host: the Swift runtime linked in
# statically (--static-swift-stdlib) and the commit recorded (`checkmark --version`). Then checks it:
# `ldd` must list no library of the Swift toolchain (only system libraries such as libc, zlib,
# libssl, libsqlite3), and `--version` must run and name the commit. Exits non-zero on any failure.
#
#   scripts/release.sh [--output DIR]    (default DIR: .build/release-dist)
#
# The commit is `git rev-parse --short HEAD`, with "-dirty" when tracked files differ from it, or
# CHECKMARK_COMMIT when set.
#
# The binary is written to DIR/checkmark; SwiftPM's own .build/release/checkmark is the same file.
set -euo pipefail
cd "$(dirname "$0")/.."

output=.build/release-dist
while [[ $# -gt 0 ]]; do
    case $1 in
        --output) output=${2:?--output needs a directory}; shift 2 ;;
        --output=*) output=${1#--output=}; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "release: unknown argument $1" >&2; exit 2 ;;
    esac
done

# CHECKMARK_COMMIT names the commit where there is no git checkout (a container build).
commit=${CHECKMARK_COMMIT:-}
if [[ -z $commit ]]; then
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [[ $commit != unknown && -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
        commit="$commit-dirty"
    fi
fi

[[ $commit =~ ^[A-Za-z0-9._-]+$ ]] || { echo "release: commit name '$commit' is not [A-Za-z0-9._-]+" >&2; exit 2; }

# The inner quotes make the macro a C string literal: -DCHECKMARK_COMMIT="4c6d371".
swift build -c release --product checkmark --static-swift-stdlib -Xcc -DCHECKMARK_COMMIT="\"$commit\""
built="$(swift build -c release --show-bin-path)/checkmark"
mkdir -p "$output"
install -m 0755 "$built" "$output/checkmark"
binary=$output/checkmark

echo "release: ldd $binary"
libraries=$(ldd "$binary")
echo "$libraries"
# Everything under the toolchain's prefix (the directory holding bin/swiftc) and the runtime's names.
toolchain=$(dirname "$(dirname "$(command -v swiftc)")")
if grep -F -e "$toolchain/" <<< "$libraries" \
    || grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|lib_FoundationICU|not found' <<< "$libraries"; then
    echo "release: $binary needs a library of the Swift toolchain ($toolchain) or a missing one (above)" >&2
    exit 1
fi

version=$("$binary" --version)
echo "release: $version"
if [[ $version != *"(commit $commit)"* ]]; then
    echo "release: --version does not name the commit $commit" >&2
    exit 1
fi
echo "release: $binary is ready"
