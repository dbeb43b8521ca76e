/* Files the tool writes whole (an index, SHA256SUMS, a report, a JUnit
 * file): all or nothing, so a reader sees the old file or the new one. */
#ifndef LL_OUTPUT_H
#define LL_OUTPUT_H

#include <stddef.h>

/* Replaces path with the n bytes of data (mode 0644): written to a
 * temporary file beside it, fsync'd, renamed over path, and the directory
 * fsync'd (best effort: the rename itself). The temporary is tmp when
 * given (a fixed name: one left by a killed writer is removed first, and
 * it is created O_EXCL without following a link), else a fresh mkstemp
 * name "<path>.XXXXXX". 0, or -1 with errno set and the temporary gone. */
int ll_write_replace(const char *path, const char *tmp, const char *data,
                     size_t n);

#endif
