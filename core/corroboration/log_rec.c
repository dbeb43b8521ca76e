/* The log set: its records and files, the time and the category rules
 * the three parsers share (log_rec.h). */
#include "log_rec.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"

static const char *const format_names[LL_LOG__FORMATS] = {
    [LL_LOG_DIAGNOSTIC] = "diagnostic-setting JSON lines",
    [LL_LOG_ANALYTICS] = "StorageBlobLogs query result (az monitor "
                         "log-analytics query)",
    [LL_LOG_CLASSIC] = "Storage Analytics log ($logs)",
};

const char *ll_log_format_name(ll_log_format f) {
  return (int)f >= 0 && f < LL_LOG__FORMATS ? format_names[f] : "unknown";
}

void ll_log_set_free(ll_log_set *s) {
  if (!s)
    return;
  free(s->recs);
  for (int i = 0; i < s->nfiles; i++)
    free(s->files[i]);
  memset(s, 0, sizeof *s);
}

ll_log_rec *ll_log_push(ll_log_set *s, int file, long line, ll_error *err) {
  const char *name = file >= 0 && file < s->nfiles ? s->files[file] : "log";
  if (s->n >= LL_LOG_RECORDS_MAX) {
    ll_fail(err, LL_E_USAGE,
            "%s: more than %d log records in all; pass only the logs of the "
            "run's hours (--print-query narrows them)",
            name, LL_LOG_RECORDS_MAX);
    return NULL;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    ll_log_rec *r = ll_realloc(s->recs, cap * sizeof *r);
    if (!r) {
      ll_fail(err, LL_E_NOMEM, "out of memory reading %s", name);
      return NULL;
    }
    s->recs = r;
    s->cap = cap;
  }
  ll_log_rec *r = &s->recs[s->n++];
  memset(r, 0, sizeof *r);
  r->file = file;
  r->line = line;
  if (file >= 0 && file < s->nfiles)
    s->file_records[file]++;
  return r;
}

void ll_log_pop(ll_log_set *s) {
  if (s->n > 0) {
    int f = s->recs[s->n - 1].file;
    if (f >= 0 && f < s->nfiles && s->file_records[f] > 0)
      s->file_records[f]--;
    s->n--;
  }
}

int ll_log_put(char *dst, size_t cap, const char *src, size_t len) {
  if (len >= cap) {
    ll_strlcpy(dst, "(overlong)", cap);
    return 0;
  }
  memcpy(dst, src, len);
  dst[len] = '\0';
  return 1;
}

void ll_log_put_uri(ll_log_rec *r, const char *uri, size_t len) {
  const char *p = uri, *end = uri + len;
  const char *scheme = NULL;
  r->host[0] = '\0';
  if (len == 0)
    return; /* an empty uri is none */
  r->has_uri = 1;
  for (const char *q = uri; q + 2 < end; q++)
    if (q[0] == ':' && q[1] == '/' && q[2] == '/') {
      scheme = q;
      break;
    } else if (q[0] == '/' || q[0] == '?') {
      break;
    }
  if (scheme) {
    p = scheme + 3;
    const char *h = p;
    while (p < end && *p != '/' && *p != '?' && *p != '#')
      p++;
    (void)ll_log_put(r->host, sizeof r->host, h, (size_t)(p - h));
  }
  const char *e = p;
  while (e < end && *e != '?' && *e != '#')
    e++;
  if (p == e)
    ll_strlcpy(r->path, "/", sizeof r->path);
  else
    (void)ll_log_put(r->path, sizeof r->path, p, (size_t)(e - p));
}

int ll_log_parse_time(const char *s, int64_t *out_ms) {
  return ll_utc_parse(s, s ? strlen(s) : 0,
                      LL_UTC_BARE | LL_UTC_SPACE | LL_UTC_SLASH | LL_UTC_NANO,
                      out_ms);
}

/* Operations whose category is plain from the REST operation; the lease
 * operations are not among them (no page read here states it). */
static const char *const reads[] = {
    "GetBlob",         "GetBlobProperties",      "GetBlobMetadata",
    "GetBlobTags",     "GetBlockList",           "ListBlobs",
    "GetContainerACL", "GetContainerProperties", "GetContainerMetadata"};
static const char *const writes[] = {
    "PutBlob",         "PutBlock",        "PutBlockList",
    "CreateContainer", "SetBlobMetadata", "SetBlobProperties",
    "CopyBlob",        "AppendBlock",     "SetBlobTags"};
static const char *const deletes[] = {"DeleteBlob", "DeleteContainer"};

static int among(const char *op, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(op, list[i]) == 0)
      return 1;
  return 0;
}

#define AMONG(op, list) among(op, list, sizeof list / sizeof *list)

const char *ll_log_category_of(const char *op) {
  return AMONG(op, reads)     ? "StorageRead"
         : AMONG(op, writes)  ? "StorageWrite"
         : AMONG(op, deletes) ? "StorageDelete"
                              : NULL;
}

int ll_log_is_read(const char *op) {
  return AMONG(op, reads);
}

static ll_status complete(ll_log_set *s, ll_log_rec *r, ll_error *err) {
  const char *name =
      r->file >= 0 && r->file < s->nfiles ? s->files[r->file] : "log";
  const char *missing = !r->time[0]        ? "time"
                        : !r->operation[0] ? "operation name"
                        : !r->status[0]    ? "status code"
                                           : NULL;
  if (missing)
    return ll_fail(err, LL_E_USAGE, "%s: record %ld has no %s (%s)", name,
                   r->line, missing, ll_log_format_name(r->format));
  if (ll_log_parse_time(r->time, &r->utc_ms) != 0)
    return ll_fail(err, LL_E_USAGE,
                   "%s: record %ld: time \"%s\" is not a UTC time like "
                   "2019-02-28T19:10:21.2123117Z",
                   name, r->line, r->time);
  const char *cat = ll_log_category_of(r->operation);
  if (!r->category[0] && cat)
    ll_strlcpy(r->category, cat, sizeof r->category);
  return LL_OK;
}

ll_status ll_log_finish(ll_log_set *s, ll_log_rec *r, ll_error *err) {
  ll_status st = complete(s, r, err);
  if (st != LL_OK)
    ll_log_pop(s);
  return st;
}

ll_status ll_log_lines(ll_log_set *s, int file, const char *buf, size_t n,
                       int trim_blanks, ll_log_line_fn fn, ll_error *err) {
  const char *p = buf, *end = buf + n;
  long line = 0;
  if (end - p >= 3 && (unsigned char)p[0] == 0xEF &&
      (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
    p += 3;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)((nl ? nl : end) - p);
    line++;
    while (len && (p[len - 1] == '\r' ||
                   (trim_blanks && (p[len - 1] == ' ' || p[len - 1] == '\t'))))
      len--;
    if (len > LL_LOG_LINE_MAX)
      return ll_fail(err, LL_E_USAGE, "%s: line %ld: longer than 64 KiB",
                     s->files[file], line);
    if (len > 0) {
      ll_status st = fn(s, file, line, p, len, err);
      if (st != LL_OK)
        return st;
    }
    p = nl ? nl + 1 : end;
  }
  if (s->file_records[file] == 0)
    return ll_fail(err, LL_E_USAGE, "%s: no records", s->files[file]);
  return LL_OK;
}
