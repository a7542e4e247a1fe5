#include "CCheckmarkMemory.h"

// Any C library header says which C library this is (glibc defines __GLIBC__ in <features.h>).
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int checkmark_return_free_memory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}
