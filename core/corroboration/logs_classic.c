/* Storage Analytics log lines ($logs), format 1.0 and 2.0 (logs.h). The
 * one hand-written tokenizer of the log readers, bounded: a line of at
 * most LL_LOG_LINE_MAX bytes, at most LL_LOG_FIELD_MAX fields.
 *
 * Fields are separated by ';'. A field that may hold a quote, a ';' or a
 * newline is HTML-encoded and quoted, yet Microsoft's own samples show
 * quoted fields holding raw quotes (""0x8D15A2913C934DE"" for an ETag, a
 * JSON authorization detail): a quoted field therefore ends at the first
 * '"' that is followed by ';' or by the end of the line. */
#include "logs_classic.h"

#include <string.h>

/* Field positions (0-based) of the documented order. */
enum {
  F_VERSION = 0,
  F_TIME = 1,
  F_OPERATION = 2,
  F_STATUS_TEXT = 3,
  F_STATUS = 4,
  F_AUTH = 7,
  F_URL = 11,
  F_REQUEST_ID = 13,
  F_IP = 15,
  F_CLIENT_REQUEST_ID = 29,
  F_OID = 30,
  F_TID = 31
};
#define FIELDS_V1 30
#define FIELDS_V2 38

typedef struct {
  const char *p;
  size_t n;
} field;

/* Splits one line; the number of fields, or -1 (with *why) when it is
 * malformed. */
static int split(const char *p, size_t len, field *f, const char **why) {
  size_t i = 0;
  int n = 0;
  for (;;) {
    if (n == LL_LOG_FIELD_MAX) {
      *why = "more fields than the format has";
      return -1;
    }
    if (i < len && p[i] == '"') {
      size_t j = i + 1;
      while (j < len && !(p[j] == '"' && (j + 1 == len || p[j + 1] == ';')))
        j++;
      if (j >= len) {
        *why = "a quoted field is not closed";
        return -1;
      }
      f[n].p = p + i + 1;
      f[n].n = j - i - 1;
      n++;
      i = j + 1;
    } else {
      size_t j = i;
      while (j < len && p[j] != ';')
        j++;
      f[n].p = p + i;
      f[n].n = j - i;
      n++;
      i = j;
    }
    if (i == len)
      return n;
    if (p[i] != ';') {
      *why = "a quoted field is followed by text";
      return -1;
    }
    i++; /* the ';' */
  }
}

/* The entity decoding a field's HTML encoding needs for an ID: &amp;
 * &quot; &lt; &gt; &#N; (decimal, ASCII); anything else is kept. */
static void put_decoded(char *dst, size_t cap, const field *f) {
  char tmp[256];
  size_t o = 0;
  for (size_t i = 0; i < f->n && o + 1 < sizeof tmp; i++) {
    const char *s = f->p + i;
    size_t left = f->n - i;
    static const struct {
      const char *ent;
      char c;
    } ents[] = {{"&amp;", '&'}, {"&quot;", '"'}, {"&lt;", '<'}, {"&gt;", '>'}};
    int done = 0;
    for (size_t k = 0; k < sizeof ents / sizeof *ents && !done; k++) {
      size_t el = strlen(ents[k].ent);
      if (left >= el && memcmp(s, ents[k].ent, el) == 0) {
        tmp[o++] = ents[k].c;
        i += el - 1;
        done = 1;
      }
    }
    if (!done && left >= 4 && s[0] == '&' && s[1] == '#') {
      size_t j = 2;
      int v = 0;
      while (j < left && j < 6 && s[j] >= '0' && s[j] <= '9')
        v = v * 10 + (s[j++] - '0');
      if (j > 2 && j < left && s[j] == ';' && v > 0 && v < 128) {
        tmp[o++] = (char)v;
        i += j;
        done = 1;
      }
    }
    if (!done)
      tmp[o++] = *s;
  }
  if (o + 1 >= sizeof tmp && f->n >= sizeof tmp - 1)
    (void)ll_log_put(dst, cap, "", cap); /* "(overlong)" */
  else
    (void)ll_log_put(dst, cap, tmp, o);
}

#define PUT(dst, fi) (void)ll_log_put(dst, sizeof dst, f[fi].p, f[fi].n)

static ll_status classic_line(ll_log_set *s, int file, long line, const char *p,
                              size_t len, ll_error *err) {
  field f[LL_LOG_FIELD_MAX];
  const char *why = NULL;
  int n = split(p, len, f, &why);
  if (n < 0)
    return ll_fail(err, LL_E_USAGE, "%s: line %ld: %s (Storage Analytics log)",
                   s->files[file], line, why);
  int want = 0;
  if (f[0].n == 3 && memcmp(f[0].p, "1.0", 3) == 0)
    want = FIELDS_V1;
  else if (f[0].n == 3 && memcmp(f[0].p, "2.0", 3) == 0)
    want = FIELDS_V2;
  if (!want)
    return ll_fail(err, LL_E_USAGE,
                   "%s: line %ld: version \"%.*s\" is not 1.0 or 2.0 "
                   "(Storage Analytics log)",
                   s->files[file], line, (int)(f[0].n > 8 ? 8 : f[0].n),
                   f[0].p);
  if (n != want)
    return ll_fail(err, LL_E_USAGE,
                   "%s: line %ld: %d fields, version %.3s has %d (truncated "
                   "or not a Storage Analytics log line)",
                   s->files[file], line, n, f[0].p, want);
  ll_log_rec *r = ll_log_push(s, file, line, err);
  if (!r)
    return err->code;
  r->format = LL_LOG_CLASSIC;
  PUT(r->time, F_TIME);
  PUT(r->operation, F_OPERATION);
  PUT(r->status_text, F_STATUS_TEXT);
  PUT(r->status, F_STATUS);
  PUT(r->auth_type, F_AUTH);
  PUT(r->caller_ip, F_IP);
  put_decoded(r->request_id, sizeof r->request_id, &f[F_REQUEST_ID]);
  put_decoded(r->client_request_id, sizeof r->client_request_id,
              &f[F_CLIENT_REQUEST_ID]);
  if (f[F_URL].n > 0)
    ll_log_put_uri(r, f[F_URL].p, f[F_URL].n);
  if (want == FIELDS_V2) {
    PUT(r->oid, F_OID);
    PUT(r->tid, F_TID);
  }
  return ll_log_finish(s, r, err);
}

ll_status ll_log_parse_classic(ll_log_set *s, int file, const char *buf,
                               size_t n, ll_error *err) {
  return ll_log_lines(s, file, buf, n, 0, classic_line, err);
}
