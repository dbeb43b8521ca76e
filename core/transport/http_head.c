/* A response's header lines as libcurl hands them over, one call per
 * line, kept whole: each name and value as the line held it, trimmed of
 * the spaces and tabs around them, never logged. */
#include "http_head.h"

#include <stdlib.h>
#include <string.h>

static size_t trimmed(const char **p, size_t n) {
  while (n > 0 && ((*p)[0] == ' ' || (*p)[0] == '\t')) {
    (*p)++;
    n--;
  }
  while (n > 0 && ((*p)[n - 1] == ' ' || (*p)[n - 1] == '\t' ||
                   (*p)[n - 1] == '\r' || (*p)[n - 1] == '\n'))
    n--;
  return n;
}

/* Folded continuation line (obs-fold): joined to the previous value. */
static int append_fold(ll_headers *hs, const char *v, size_t vn) {
  if (hs->n == 0 || vn == 0)
    return 1;
  char **dst = &hs->v[hs->n - 1].value;
  size_t on = strlen(*dst);
  char *nv = malloc(on + 1 + vn + 1);
  if (!nv)
    return 0;
  memcpy(nv, *dst, on);
  nv[on] = ' ';
  memcpy(nv + on + 1, v, vn);
  nv[on + 1 + vn] = '\0';
  free(*dst);
  *dst = nv;
  return 1;
}

int ll_http_head_line(ll_headers *hs, const char *buf, size_t n) {
  /* Every status line starts a new response (100 Continue, then the final
   * one): only the final response's headers are kept. */
  if (n >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
    ll_headers_clear(hs);
    return 1;
  }
  const char *line = buf;
  int fold = n > 0 && (buf[0] == ' ' || buf[0] == '\t');
  size_t len = trimmed(&line, n);
  if (len == 0)
    return 1;
  if (fold)
    return append_fold(hs, line, len);
  const char *colon = memchr(line, ':', len);
  if (!colon)
    return 1; /* not a header; curl has its own opinion of the framing */
  const char *name = line, *val = colon + 1;
  size_t name_n = trimmed(&name, (size_t)(colon - line));
  size_t val_n = trimmed(&val, len - (size_t)(val - line));
  if (name_n == 0)
    return 1;
  return ll_headers_add_n(hs, name, name_n, val, val_n) == LL_OK;
}
