/* The query that fetches a run's logs (corroborate_query.c). */
#ifndef LL_CORROBORATE_QUERY_H
#define LL_CORROBORATE_QUERY_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "ll.h"

/* --print-query: the KQL over StorageBlobLogs for the run's window and
 * blob (every column corroborate reads), the az command that runs it, and
 * the prefixes a diagnostic setting writes its JSON lines under. */
ll_status ll_corr_query(const char *dir, int margin_s, ll_buf *out,
                        ll_error *err) LL_WARN_UNUSED;
/* The same query from export rows already read and checked (rows[0] the
 * manifest row); dir only names the bundle in the text. */
ll_status ll_corr_query_rows(const cJSON *rows, const char *dir, int margin_s,
                             ll_buf *out, ll_error *err) LL_WARN_UNUSED;

/* ms since the epoch as "2026-12-01T09:00:00.000Z" (corroborate_query.c). */
void ll_corr_fmt_time(int64_t ms, char *buf, size_t cap);

#endif
