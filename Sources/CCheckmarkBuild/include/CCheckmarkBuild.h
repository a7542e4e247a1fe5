#ifndef CCHECKMARK_BUILD_H
#define CCHECKMARK_BUILD_H

/// The commit the binary was built from, as `scripts/release.sh` passes it
/// (`-Xcc -DCHECKMARK_COMMIT="…"`), or "unknown" for any other build.
const char *checkmark_build_commit(void);

#endif
