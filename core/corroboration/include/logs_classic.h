/* Storage Analytics ($logs) lines, format 1.0 and 2.0 (logs_classic.c):
 * appends the records to s (log_rec.h). */
#ifndef LL_LOGS_CLASSIC_H
#define LL_LOGS_CLASSIC_H

#include "log_rec.h"

ll_status ll_log_parse_classic(ll_log_set *s, int file, const char *buf,
                               size_t n, ll_error *err) LL_WARN_UNUSED;

#endif
