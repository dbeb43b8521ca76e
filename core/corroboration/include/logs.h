/* The service's own account of requests: Azure Storage's resource logs in
 * the three documented forms (log_rec.h), detected and read into one set
 * (docs/CORROBORATION.md, "Formats"). Never includes lua.h. */
#ifndef LL_LOGS_H
#define LL_LOGS_H

#include "ll.h"
#include "log_rec.h"

/* Detects the format of buf (the whole file named name) and appends its
 * records to s. LL_E_USAGE, one line naming the file, for a file in none
 * of the formats, a truncated or malformed record (its line), a record
 * without a time, an operation or a status, or a set over its limits;
 * LL_E_NOMEM. On failure s keeps the records of earlier files only. */
ll_status ll_log_parse(ll_log_set *s, const char *name, const char *buf,
                       size_t n, ll_error *err) LL_WARN_UNUSED;

/* Reads the file at path (core/base/input.c: regular file, no link, at
 * most LL_LOG_FILE_MAX) and parses it. */
ll_status ll_log_read(ll_log_set *s, const char *path,
                      ll_error *err) LL_WARN_UNUSED;

#endif
