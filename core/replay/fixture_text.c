/* The small formats of a fixture: text buffers, lease placeholders, UTF-8
 * and base64 bodies, UTC stamps, the account path, and the printer that
 * writes fixtures as JSON.stringify(v, null, 2) does. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fixture_impl.h"

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

int fx_utf8_ok(const unsigned char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t k;
    unsigned long cp;
    if (c == 0)
      return 0;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xc2 && c <= 0xdf) {
      k = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      k = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      k = 3;
      cp = c & 0x07;
    } else {
      return 0;
    }
    if (n - i <= k)
      return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((s[i + j] & 0xc0) != 0x80)
        return 0;
      cp = (cp << 6) | (s[i + j] & 0x3f);
    }
    if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    i += k + 1;
  }
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

static void put_string(fx_buf *b, const char *s) {
  ll_buf_put(b, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char esc[8];
    switch (*p) {
    case '"':
      fx_puts(b, "\\\"");
      break;
    case '\\':
      fx_puts(b, "\\\\");
      break;
    case '\b':
      fx_puts(b, "\\b");
      break;
    case '\f':
      fx_puts(b, "\\f");
      break;
    case '\n':
      fx_puts(b, "\\n");
      break;
    case '\r':
      fx_puts(b, "\\r");
      break;
    case '\t':
      fx_puts(b, "\\t");
      break;
    default:
      if (*p < 0x20) {
        snprintf(esc, sizeof esc, "\\u%04x", *p);
        fx_puts(b, esc);
      } else {
        ll_buf_put(b, (const char *)p, 1);
      }
    }
  }
  ll_buf_put(b, "\"", 1);
}

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
        put_string(b, c->string ? c->string : "");
        fx_puts(b, ": ");
      }
      print_item(b, c, depth + 1);
      if (c->next)
        fx_puts(b, ",");
    }
    indent(b, depth);
    fx_puts(b, obj ? "}" : "]");
  } else if (cJSON_IsString(v)) {
    put_string(b, v->valuestring);
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
