/* Internal to the log readers: the record helpers logs.c gives the three
 * parsers. */
#ifndef LL_LOGS_IMPL_H
#define LL_LOGS_IMPL_H

#include "logs.h"

/* A new zeroed record at the end of s (NULL: over LL_LOG_RECORDS_MAX, or
 * out of memory, with err filled naming the file). */
ll_log_rec *ll_log_push(ll_log_set *s, int file, long line, ll_error *err);
/* Drops the last record (one that failed its checks). */
void ll_log_pop(ll_log_set *s);
/* Copies src (len bytes) into a field of cap bytes; 0 when it did not fit
 * (the field then holds "(overlong)", which matches no ID and no path). */
int ll_log_put(char *dst, size_t cap, const char *src, size_t len);
/* The path of a URI ("https://host/c/b?q" or "/c/b?q"), into dst. */
void ll_log_put_path(char *dst, size_t cap, const char *uri, size_t len);
/* Completes a record: parses its time, derives a missing category, and
 * checks it holds a time, an operation and a status; else LL_E_USAGE
 * naming the file and line. */
ll_status ll_log_finish(ll_log_set *s, ll_log_rec *r, ll_error *err);

#endif
