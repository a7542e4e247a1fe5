#include "CCheckmarkBuild.h"

#ifndef CHECKMARK_COMMIT
#define CHECKMARK_COMMIT "unknown"
#endif

const char *checkmark_build_commit(void) { return CHECKMARK_COMMIT; }
