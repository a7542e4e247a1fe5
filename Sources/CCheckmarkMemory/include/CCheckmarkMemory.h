#ifndef CCHECKMARK_MEMORY_H
#define CCHECKMARK_MEMORY_H

/// Gives the memory the allocator holds free back to the system (glibc's `malloc_trim(0)`), so that
/// what a process freed shows in its resident size; returns whether any was given back. Nothing to do
/// (0) with another C library.
int checkmark_return_free_memory(void);

#endif
