/* One record of the service's own account of requests (log_rec.c), and
 * the set the readers fill. The formats: Azure Storage's resource logs in
 * the three documented forms, read into one record shape
 * (docs/CORROBORATION.md, "Formats"). Never includes lua.h.
 *
 *   diagnostic  JSON lines a diagnostic setting writes to a storage
 *               account (insights-logs-storage{read,write,delete}/.../
 *               PT1H.json): one object per line, time, category,
 *               operationName, statusCode, statusText, callerIpAddress,
 *               correlationId, uri, identity.type,
 *               identity.requester.objectId/tenantId,
 *               properties.clientRequestId
 *   analytics   the JSON array `az monitor log-analytics query` prints for
 *               a StorageBlobLogs query: objects keyed by column,
 *               TimeGenerated, Category, OperationName, StatusCode,
 *               StatusText, CorrelationId, ClientRequestId, Uri,
 *               CallerIpAddress, AuthenticationType, RequesterObjectId,
 *               RequesterTenantId
 *   classic     Storage Analytics ($logs) lines, version 1.0 (30 fields)
 *               or 2.0 (38 fields), semicolon-delimited, quoted fields
 *
 * Every value is kept as the log wrote it: a status is its text ("201",
 * "Unknown"), never a number made from it. */
#ifndef LL_LOG_REC_H
#define LL_LOG_REC_H

#include <stddef.h>
#include <stdint.h>

#include "ll.h"

/* Limits, in the spirit of core/base/input.h. */
#define LL_LOG_FILE_MAX (64u * 1024u * 1024u) /* one --logs file */
#define LL_LOG_FILES_MAX 64                   /* --logs files in one run */
#define LL_LOG_LINE_MAX (64u * 1024u)         /* one JSON or classic line */
#define LL_LOG_RECORDS_MAX 500000             /* records over all files */
#define LL_LOG_FIELD_MAX 40 /* classic fields read (2.0 has 38) */

typedef enum {
  LL_LOG_DIAGNOSTIC = 0,
  LL_LOG_ANALYTICS,
  LL_LOG_CLASSIC,
  LL_LOG__FORMATS
} ll_log_format;

const char *ll_log_format_name(ll_log_format f);

/* One logged operation. Fields absent from the log are "". */
typedef struct {
  ll_log_format format;
  int file;  /* index into the set's file names */
  long line; /* 1-based line (analytics: the array item) */
  int64_t utc_ms;
  char time[40];
  char category[24]; /* as logged, or derived from the operation */
  char operation[48];
  char status[16];
  char status_text[64];
  char client_request_id[128];
  char request_id[64]; /* correlationId, or request-id-header (classic) */
  char path[1024];     /* the URI's path, percent-encoding kept, no query */
  char host[256];      /* the URI's host[:port] as logged ("": none) */
  int has_uri;         /* the record gave a URI at all */
  char caller_ip[64];
  char auth_type[32];
  char oid[64], tid[64]; /* requester; never copied into evidence */
} ll_log_rec;

typedef struct {
  ll_log_rec *recs;
  size_t n, cap;
  char *files[LL_LOG_FILES_MAX];
  ll_log_format formats[LL_LOG_FILES_MAX];
  size_t file_records[LL_LOG_FILES_MAX];
  char file_sha256[LL_LOG_FILES_MAX][65];
  int nfiles;
} ll_log_set;

void ll_log_set_free(ll_log_set *s);

/* "2019-02-28T19:10:21.2123117Z" (or with '/' and ' ', no zone: UTC) as
 * milliseconds since the epoch, read by ll_utc_parse (clock.h); 0 on
 * success, -1 when it is not one. */
int ll_log_parse_time(const char *s, int64_t *out_ms);

/* The category a logged operation belongs to when the log does not say,
 * for the operations whose category is plain (reads, writes, deletes:
 * docs/CORROBORATION.md); NULL for the others (the lease operations). */
const char *ll_log_category_of(const char *operation);
/* Whether a logged operation only reads: an unrecorded one is listed; any
 * other (a write, a delete, a lease operation) that the service accepted
 * contradicts the run. */
int ll_log_is_read(const char *operation);

/* A new zeroed record at the end of s (NULL: over LL_LOG_RECORDS_MAX, or
 * out of memory, with err filled naming the file). */
ll_log_rec *ll_log_push(ll_log_set *s, int file, long line, ll_error *err);
/* Drops the last record (one that failed its checks). */
void ll_log_pop(ll_log_set *s);
/* Copies src (len bytes) into a field of cap bytes; 0 when it did not fit
 * (the field then holds "(overlong)", which matches no ID and no path). */
int ll_log_put(char *dst, size_t cap, const char *src, size_t len);
/* The host and the path of a URI ("https://host/c/b?q" or "/c/b?q": no
 * host), into r->host and r->path; marks r->has_uri. */
void ll_log_put_uri(ll_log_rec *r, const char *uri, size_t len);
/* One line of a line-oriented log (classic text, diagnostic JSON lines):
 * its number from 1 and its text without the line end. */
typedef ll_status (*ll_log_line_fn)(ll_log_set *s, int file, long line,
                                    const char *p, size_t len, ll_error *err);
/* Calls fn for every non-empty line of buf, after a UTF-8 BOM, with a
 * trailing CR (and, when trim_blanks, trailing spaces and tabs) removed.
 * LL_E_USAGE naming the file and line for a line over LL_LOG_LINE_MAX, and
 * naming the file when it held no records; else fn's first failure. */
ll_status ll_log_lines(ll_log_set *s, int file, const char *buf, size_t n,
                       int trim_blanks, ll_log_line_fn fn, ll_error *err);
/* Completes r, the record just pushed: parses its time, derives a missing
 * category, and checks it holds a time, an operation and a status; else
 * drops r from s and returns LL_E_USAGE naming the file and line. */
ll_status ll_log_finish(ll_log_set *s, ll_log_rec *r, ll_error *err);

#endif
