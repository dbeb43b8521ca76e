/* Status names, the caller-owned error, header lists and small string
 * helpers shared by every core module. */
#include "ll.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"

static const char *const names[LL_E__COUNT] = {
    [LL_OK] = "LL_OK",
    [LL_E_USAGE] = "LL_E_USAGE",
    [LL_E_IO] = "LL_E_IO",
    [LL_E_NOMEM] = "LL_E_NOMEM",
    [LL_E_TRANSPORT] = "LL_E_TRANSPORT",
    [LL_E_PARSE] = "LL_E_PARSE",
    [LL_E_AUTH] = "LL_E_AUTH",
    [LL_E_INSECURE] = "LL_E_INSECURE",
    [LL_E_TOO_LARGE] = "LL_E_TOO_LARGE",
    [LL_E_BAD_LEASE_ID] = "LL_E_BAD_LEASE_ID",
    [LL_E_BAD_URL] = "LL_E_BAD_URL",
    [LL_E_EVIDENCE_EXISTS] = "LL_E_EVIDENCE_EXISTS",
    [LL_E_MANIFEST] = "LL_E_MANIFEST",
    [LL_E_DURABILITY] = "LL_E_DURABILITY",
    [LL_E_HOLD] = "LL_E_HOLD",
    [LL_E_UNRECONCILED] = "LL_E_UNRECONCILED",
    [LL_E_LEASE_PRECONDITION] = "LL_E_LEASE_PRECONDITION",
    [LL_E_UNDECLARED] = "LL_E_UNDECLARED",
    [LL_E_CLOSED] = "LL_E_CLOSED",
    [LL_E_REPLAY] = "LL_E_REPLAY",
    [LL_E_TAMPER] = "LL_E_TAMPER",
    [LL_E_ORDER] = "LL_E_ORDER",
    [LL_E_SCOPE] = "LL_E_SCOPE",
    [LL_E_TARGET_EXISTS] = "LL_E_TARGET_EXISTS",
    [LL_E_PREFLIGHT] = "LL_E_PREFLIGHT",
    [LL_E_DELETE_UNCONFIRMED] = "LL_E_DELETE_UNCONFIRMED",
    [LL_E_NOT_CREATED] = "LL_E_NOT_CREATED",
    [LL_E_INTERNAL] = "LL_E_INTERNAL",
};

const char *ll_code_name(ll_code code) {
  if ((int)code < 0 || code >= LL_E__COUNT || !names[code])
    return "LL_E_INTERNAL";
  return names[code];
}

ll_status ll_fail(ll_error *err, ll_code code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof err->message) {
      size_t end = sizeof err->message - 4; /* room for "..." and NUL */
      while (end > 0 && ((unsigned char)err->message[end] & 0xC0) == 0x80)
        end--; /* never leave half a UTF-8 character */
      memcpy(err->message + end, "...", 4);
    }
  }
  return code;
}

int ll_code_exit(ll_code code) {
  switch (code) {
  case LL_OK:
    return 0;
  case LL_E_INTERNAL:
  case LL_E_NOMEM:
    return 70;
  case LL_E_HOLD:
  case LL_E_DURABILITY:
  case LL_E_TRANSPORT:
  case LL_E_TAMPER:
    return 2; /* a doubt about evidence is a HOLD */
  default:
    return 64;
  }
}

int ll_code_invariant(ll_code code) {
  switch (code) {
  case LL_E_DURABILITY:
    return 2;
  case LL_E_HOLD:
    return 3;
  case LL_E_UNRECONCILED:
    return 4;
  case LL_E_LEASE_PRECONDITION:
    return 5;
  case LL_E_UNDECLARED:
    return 6;
  case LL_E_TOO_LARGE:
    return 7;
  case LL_E_INSECURE:
    return 10;
  case LL_E_MANIFEST:
    return 11;
  case LL_E_SCOPE:
    return 14;
  case LL_E_TARGET_EXISTS:
  case LL_E_PREFLIGHT:
  case LL_E_DELETE_UNCONFIRMED:
  case LL_E_NOT_CREATED:
    return 15;
  default:
    return 0;
  }
}

void ll_headers_init(ll_headers *h) {
  memset(h, 0, sizeof *h);
}

void ll_headers_clear(ll_headers *h) {
  for (size_t i = 0; i < h->n; i++) {
    free(h->v[i].name);
    free(h->v[i].value);
  }
  h->n = 0;
}

void ll_headers_cleanup(ll_headers *h) {
  ll_headers_clear(h);
  free(h->v);
  ll_headers_init(h);
}

ll_status ll_headers_add(ll_headers *h, const char *name, const char *value) {
  value = value ? value : "";
  return ll_headers_add_n(h, name, strlen(name), value, strlen(value));
}

ll_status ll_headers_add_n(ll_headers *h, const char *name, size_t name_n,
                           const char *value, size_t value_n) {
  if (h->n == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 16;
    ll_header *v = realloc(h->v, cap * sizeof *v);
    if (!v)
      return LL_E_NOMEM;
    h->v = v;
    h->cap = cap;
  }
  char *n = malloc(name_n + 1), *val = malloc(value_n + 1);
  if (!n || !val) {
    free(n);
    free(val);
    return LL_E_NOMEM;
  }
  memcpy(n, name, name_n);
  n[name_n] = '\0';
  memcpy(val, value, value_n);
  val[value_n] = '\0';
  h->v[h->n].name = n;
  h->v[h->n].value = val;
  h->n++;
  return LL_OK;
}

ll_status ll_headers_set(ll_headers *h, const char *name, const char *value) {
  for (size_t i = 0; i < h->n; i++) {
    if (strcasecmp(h->v[i].name, name) == 0) {
      char *val = strdup(value ? value : "");
      if (!val)
        return LL_E_NOMEM;
      free(h->v[i].value);
      h->v[i].value = val;
      return LL_OK;
    }
  }
  return ll_headers_add(h, name, value);
}

const char *ll_headers_get(const ll_headers *h, const char *name) {
  for (size_t i = 0; i < h->n; i++)
    if (strcasecmp(h->v[i].name, name) == 0)
      return h->v[i].value;
  return NULL;
}

const char *ll_headers_get_agreed(const ll_headers *h, const char *name,
                                  int *differ) {
  const char *first = NULL;
  *differ = 0;
  for (size_t i = 0; i < h->n; i++) {
    if (strcasecmp(h->v[i].name, name) != 0)
      continue;
    if (!first) {
      first = h->v[i].value;
    } else if (strcmp(first, h->v[i].value) != 0) {
      *differ = 1;
      return NULL;
    }
  }
  return first;
}

ll_status ll_headers_copy(ll_headers *dst, const ll_headers *src) {
  for (size_t i = 0; i < src->n; i++) {
    ll_status st = ll_headers_add(dst, src->v[i].name, src->v[i].value);
    if (st != LL_OK)
      return st;
  }
  return LL_OK;
}

int ll_strlcpy(char *dst, const char *src, size_t cap) {
  if (cap == 0)
    return 0;
  size_t n = strlen(src);
  if (n >= cap) {
    memcpy(dst, src, cap - 1);
    dst[cap - 1] = '\0';
    return 0;
  }
  memcpy(dst, src, n + 1);
  return 1;
}

int ll_buf_reserve(ll_buf *b, size_t n) {
  if (b->oom)
    return 0;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1)
      cap *= 2;
    /* counted: a caller that goes on without the room (a waiting export
     * line written alone) still leaves the run short of ACCEPT */
    char *p = ll_realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return 0;
    }
    b->p = p;
    b->cap = cap;
  }
  return 1;
}

void ll_buf_put(ll_buf *b, const char *s, size_t n) {
  if (!ll_buf_reserve(b, n))
    return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

void ll_buf_printf(ll_buf *b, const char *fmt, ...) {
  if (b->oom)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = 1;
    return;
  }
  if (!ll_buf_reserve(b, (size_t)n))
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)n;
}

ll_status ll_buf_read_file(ll_buf *b, const char *path, size_t max) {
  FILE *f = path ? fopen(path, "rb") : NULL;
  if (!f)
    return LL_E_IO;
  ll_buf_put(b, "", 0);
  char chunk[1 << 16];
  size_t k;
  ll_status st = LL_OK;
  while (st == LL_OK && (k = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (b->n + k > max)
      st = LL_E_TOO_LARGE;
    else
      ll_buf_put(b, chunk, k);
  }
  if (st == LL_OK && ferror(f))
    st = LL_E_IO;
  fclose(f);
  if (st == LL_OK && b->oom)
    st = LL_E_NOMEM;
  return st;
}
