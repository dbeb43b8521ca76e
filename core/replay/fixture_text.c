/* The small formats of a fixture: text buffers, lease placeholders, UTF-8
 * and base64 bodies, UTC stamps, the account path, and the printer that
 * writes fixtures as JSON.stringify(v, null, 2) does. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fixture_impl.h"
#include "text.h"

/* ---- buffers ----------------------------------------------------------- */

void fx_puts(fx_buf *b, const char *s) {
  ll_buf_put(b, s, strlen(s));
}

/* ---- small formats ----------------------------------------------------- */

int fx_placeholder(const char *s, char name[FX_NAME_MAX]) {
  static const char pre[] = "{{lease:";
  size_t n = s ? strlen(s) : 0, p = sizeof pre - 1;
  if (n < p + 3 || strncmp(s, pre, p) != 0 || strcmp(s + n - 2, "}}") != 0)
    return 0;
  size_t len = n - p - 2;
  if (len == 0 || len >= FX_NAME_MAX)
    return 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[p + i];
    if (!ll_alias_char(c))
      return 0;
  }
  memcpy(name, s + p, len);
  name[len] = '\0';
  return 1;
}

char *fx_base64(const unsigned char *s, size_t n) {
  char *out = malloc(4 * ((n + 2) / 3) + 1);
  if (out)
    EVP_EncodeBlock((unsigned char *)out, s, (int)n);
  return out;
}

ll_status fx_unbase64(const char *s, unsigned char **out, size_t *n) {
  size_t len = strlen(s);
  if (len % 4 != 0)
    return LL_E_PARSE;
  unsigned char *buf = malloc(len / 4 * 3 + 1);
  if (!buf)
    return LL_E_NOMEM;
  int got = EVP_DecodeBlock(buf, (const unsigned char *)s, (int)len);
  if (got < 0) {
    free(buf);
    return LL_E_PARSE;
  }
  size_t pad = (len > 0 && s[len - 1] == '=') + (len > 1 && s[len - 2] == '=');
  *out = buf;
  *n = (size_t)got - pad;
  return LL_OK;
}

int fx_parse_utc(const char *s, int64_t *ms) {
  return ll_utc_parse(s, s ? strlen(s) : 0, 0, ms) == 0;
}

void ll_fixture_account_path(const char *url, char *buf, size_t cap) {
  const char *p = url ? strstr(url, "://") : NULL;
  buf[0] = '\0';
  if (!p)
    return;
  p = strchr(p + 3, '/');
  if (!p)
    return;
  size_t n = strcspn(p, "?#");
  while (n > 0 && p[n - 1] == '/')
    n--;
  if (n >= cap)
    n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
}

/* ---- printing, as JSON.stringify(v, null, 2) --------------------------- */

static void indent(fx_buf *b, int depth) {
  ll_buf_put(b, "\n", 1);
  for (int i = 0; i < depth; i++)
    ll_buf_put(b, "  ", 2);
}

static void print_item(fx_buf *b, const cJSON *v, int depth) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v);
    if (!v->child) {
      fx_puts(b, obj ? "{}" : "[]");
      return;
    }
    fx_puts(b, obj ? "{" : "[");
    for (const cJSON *c = v->child; c; c = c->next) {
      indent(b, depth + 1);
      if (obj) {
        ll_json_put_string(b, c->string ? c->string : "");
        fx_puts(b, ": ");
      }
      print_item(b, c, depth + 1);
      if (c->next)
        fx_puts(b, ",");
    }
    indent(b, depth);
    fx_puts(b, obj ? "}" : "]");
  } else if (cJSON_IsString(v)) {
    ll_json_put_string(b, v->valuestring);
  } else {
    cJSON *copy = cJSON_Duplicate(v, 0);
    char *t = copy ? cJSON_PrintUnformatted(copy) : NULL;
    fx_puts(b, t ? t : "null");
    cJSON_free(t);
    cJSON_Delete(copy);
  }
}

char *ll_fixture_print(const cJSON *v) {
  fx_buf b = {0};
  print_item(&b, v, 0);
  ll_buf_put(&b, "\n", 1);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
