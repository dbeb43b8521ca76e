/* Format detection and reading of the operator's --logs files (logs.h). */
#include "logs.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"
#include "input.h"
#include "logs_classic.h"
#include "logs_json.h"

static const char *skip_space(const char *p, const char *end) {
  if (end - p >= 3 && (unsigned char)p[0] == 0xEF &&
      (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
    p += 3;
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
    p++;
  return p;
}

ll_status ll_log_parse(ll_log_set *s, const char *name, const char *buf,
                       size_t n, ll_error *err) {
  if (s->nfiles >= LL_LOG_FILES_MAX)
    return ll_fail(err, LL_E_USAGE, "%s: more than %d --logs files", name,
                   LL_LOG_FILES_MAX);
  const char *p = skip_space(buf, buf + n), *end = buf + n;
  ll_log_format f;
  if (p < end && *p == '[')
    f = LL_LOG_ANALYTICS;
  else if (p < end && *p == '{')
    f = LL_LOG_DIAGNOSTIC;
  else if (end - p >= 4 &&
           (memcmp(p, "1.0;", 4) == 0 || memcmp(p, "2.0;", 4) == 0))
    f = LL_LOG_CLASSIC;
  else
    return ll_fail(err, LL_E_USAGE,
                   "%s: not a log leaselua reads: expected diagnostic-setting "
                   "JSON lines (one {...} per line, PT1H.json), the JSON array "
                   "of `az monitor log-analytics query` over StorageBlobLogs "
                   "([...]), or Storage Analytics lines (1.0;... or 2.0;...)",
                   name);
  const char *base = strrchr(name, '/');
  char *copy = ll_strdup(base ? base + 1 : name);
  if (!copy)
    return ll_fail(err, LL_E_NOMEM, "out of memory reading %s", name);
  int file = s->nfiles++;
  s->files[file] = copy;
  s->formats[file] = f;
  s->file_records[file] = 0;
  if (ll_sha256_hex(buf, n, s->file_sha256[file]) != LL_OK)
    s->file_sha256[file][0] = '\0';
  size_t before = s->n;
  ll_status st =
      f == LL_LOG_ANALYTICS    ? ll_log_parse_analytics(s, file, buf, n, err)
      : f == LL_LOG_DIAGNOSTIC ? ll_log_parse_diagnostic(s, file, buf, n, err)
                               : ll_log_parse_classic(s, file, buf, n, err);
  if (st != LL_OK) {
    s->n = before;
    free(s->files[file]);
    s->files[file] = NULL;
    s->nfiles--;
  }
  return st;
}

ll_status ll_log_read(ll_log_set *s, const char *path, ll_error *err) {
  ll_buf b = {0};
  ll_status st =
      ll_input_read(path, "log file", "--logs", LL_LOG_FILE_MAX, &b, err);
  if (st == LL_OK)
    st = ll_log_parse(s, path, b.p, b.n, err);
  free(b.p);
  return st;
}
