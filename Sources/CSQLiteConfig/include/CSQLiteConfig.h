#ifndef CSQLITECONFIG_H
#define CSQLITECONFIG_H

/// Turns off SQLite's process-wide memory statistics (SQLITE_CONFIG_MEMSTATUS), so that its
/// allocations do not each take a global mutex to count themselves. Takes effect only before SQLite
/// is first initialized in the process: returns SQLITE_OK (0) then, SQLITE_MISUSE (21) after.
int checkmark_sqlite_disable_memory_statistics(void);

#endif
