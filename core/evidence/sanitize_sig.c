/* A SAS signature found by its characters, whatever each came back as: a
 * server may echo it percent-encoded (once or twice, hex in either case),
 * as base64url, with '+' read as a space, JSON- or XML-escaped, or any mix
 * of these, and may cut it. Any stretch of LL_SANITIZE_SIG_MIN or more
 * consecutive characters of the decoded signature is a match. */
#include <string.h>

#include "sanitize_impl.h"

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* '+', '/', '=' or '+' for a space, from the byte they are escaped as. */
static char escaped(unsigned v) {
  return v == 0x2B || v == 0x20 ? '+' : v == 0x2F ? '/' : v == 0x3D ? '=' : 0;
}

/* Two hex digits at s[i], or -1. */
static int hex2(const char *s, size_t len, size_t i) {
  if (len - i < 2)
    return -1;
  int a = hexval(s[i]), b = hexval(s[i + 1]);
  return a < 0 || b < 0 ? -1 : a * 16 + b;
}

/* The unit of text at s[i] that may stand for one character of a
 * signature: its length, and the character in *c ('+' '/' '=' or a
 * letter or digit); 0 when none. */
static size_t sig_unit(const char *s, size_t len, size_t i, char *c) {
  unsigned char b = (unsigned char)s[i];
  if ((b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') ||
      (b >= 'A' && b <= 'Z')) {
    *c = (char)b;
    return 1;
  }
  switch (b) {
  case '+':
  case ' ':
  case '-': /* base64url */
    *c = '+';
    return 1;
  case '/':
  case '_':
    *c = '/';
    return 1;
  case '=':
    *c = '=';
    return 1;
  case '%': { /* %2B, or %252B encoded twice */
    int v = hex2(s, len, i + 1);
    if (v == 0x25) {
      v = hex2(s, len, i + 3);
      return v >= 0 && (*c = escaped((unsigned)v)) ? 5 : 0;
    }
    return v >= 0 && (*c = escaped((unsigned)v)) ? 3 : 0;
  }
  case '\\': /* JSON: \/ and \u002B */
    if (len - i >= 2 && s[i + 1] == '/') {
      *c = '/';
      return 2;
    }
    if (len - i >= 6 && s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0') {
      int v = hex2(s, len, i + 4);
      return v >= 0 && (*c = escaped((unsigned)v)) ? 6 : 0;
    }
    return 0;
  case '&': { /* XML: &#x2B; and &#43; */
    size_t j = i + 1, v = 0, digits = 0;
    if (j >= len || s[j++] != '#')
      return 0;
    int hex = j < len && (s[j] == 'x' || s[j] == 'X');
    j += (size_t)hex;
    for (; j < len && digits < 4 && s[j] != ';'; j++, digits++) {
      int d =
          hex ? hexval(s[j]) : (s[j] >= '0' && s[j] <= '9' ? s[j] - '0' : -1);
      if (d < 0)
        return 0;
      v = v * (hex ? 16u : 10u) + (unsigned)d;
    }
    if (!digits || j >= len || s[j] != ';')
      return 0;
    return (*c = escaped((unsigned)v)) ? j + 1 - i : 0;
  }
  default:
    return 0;
  }
}

/* How many characters of d from d[j] the text at s[i] spells, and where
 * that ends (*end). */
static size_t spelled_from(const char *s, size_t len, size_t i, const char *d,
                           size_t j, size_t *end) {
  size_t n = 0, u;
  char c;
  while (d[j + n] && i < len && (u = sig_unit(s, len, i, &c)) != 0 &&
         c == d[j + n]) {
    i += u;
    n++;
  }
  *end = i;
  return n;
}

size_t ll_san_sig_at(const char *s, size_t len, size_t i, const char *d) {
  size_t dl = strlen(d), best = 0, need, e;
  char c;
  need = dl < LL_SANITIZE_SIG_MIN ? dl : LL_SANITIZE_SIG_MIN;
  if (!dl || i >= len || !sig_unit(s, len, i, &c))
    return 0;
  for (const char *p = d; (p = memchr(p, c, dl - (size_t)(p - d))); p++) {
    size_t j = (size_t)(p - d);
    if (dl - j < need)
      break;
    if (spelled_from(s, len, i, d, j, &e) >= need && e > best)
      best = e;
  }
  return best;
}

size_t ll_san_sig_find(const char *s, size_t len, const char *d, size_t *end) {
  /* the bytes a unit may start with: d's letters and digits, and the
   * first bytes of '+', '/' and '=' in each spelling */
  unsigned char start[256] = {0};
  for (const char *p = d; *p; p++)
    start[(unsigned char)*p] = 1;
  for (const char *p = "+ -/_=%\\&"; *p; p++)
    start[(unsigned char)*p] = 1;
  for (size_t i = 0; i < len; i++)
    if (start[(unsigned char)s[i]] && (*end = ll_san_sig_at(s, len, i, d)))
      return i;
  return len;
}
