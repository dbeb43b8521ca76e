/* The two JSON forms of the resource logs (logs_json.c): a diagnostic
 * setting's JSON lines and the StorageBlobLogs rows az prints. Each parser
 * appends the records of its one format to s (log_rec.h). */
#ifndef LL_LOGS_JSON_H
#define LL_LOGS_JSON_H

#include "log_rec.h"

ll_status ll_log_parse_diagnostic(ll_log_set *s, int file, const char *buf,
                                  size_t n, ll_error *err) LL_WARN_UNUSED;
ll_status ll_log_parse_analytics(ll_log_set *s, int file, const char *buf,
                                 size_t n, ll_error *err) LL_WARN_UNUSED;
#endif
