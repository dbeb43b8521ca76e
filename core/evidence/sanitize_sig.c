/* A SAS signature found by its characters, whatever each came back as: a
 * server may echo it percent-encoded (once or twice, hex in either case),
 * as base64url, with '+' read as a space, JSON- or XML-escaped, or any mix
 * of these, and may cut it. Any stretch of LL_SANITIZE_SIG_MIN or more
 * consecutive characters of the decoded signature is a match. */
#include <string.h>

#include "sanitize_impl.h"
#include "text.h"

static int is_alnum(unsigned v) {
  return (v >= '0' && v <= '9') || (v >= 'a' && v <= 'z') ||
         (v >= 'A' && v <= 'Z');
}

/* The character a code escapes: a letter or digit as it is, '+' (or a
 * space, which a form decoder makes of one), '/' or '='; else 0. */
static char escaped(unsigned long v) {
  if (v < 128 && is_alnum((unsigned)v))
    return (char)v;
  return v == 0x2B || v == 0x20 ? '+' : v == 0x2F ? '/' : v == 0x3D ? '=' : 0;
}

/* HTML's named references for the three (a page may echo them so). */
static size_t named_ref(const char *s, size_t len, size_t i, char *c) {
  static const struct {
    const char *name;
    char c;
  } refs[] = {{"&plus;", '+'}, {"&sol;", '/'}, {"&equals;", '='}};
  for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
    size_t n = strlen(refs[k].name);
    if (len - i >= n && memcmp(s + i, refs[k].name, n) == 0) {
      *c = refs[k].c;
      return n;
    }
  }
  return 0;
}

/* Two hex digits at s[i], or -1. */
static int hex2(const char *s, size_t len, size_t i) {
  if (len - i < 2)
    return -1;
  int a = ll_hexval(s[i]), b = ll_hexval(s[i + 1]);
  return a < 0 || b < 0 ? -1 : a * 16 + b;
}

/* The unit of text at s[i] that may stand for one character of a
 * signature: its length, and the character in *c ('+' '/' '=' or a
 * letter or digit); 0 when none. */
static size_t sig_unit(const char *s, size_t len, size_t i, char *c) {
  unsigned char b = (unsigned char)s[i];
  if (is_alnum(b)) {
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
  case '\\': { /* JSON: \/ and \u002B, escaped again any times (\\/) */
    size_t k = i;
    while (k < len && k - i < 8 && s[k] == '\\')
      k++;
    if (k < len && s[k] == '/') {
      *c = '/';
      return k + 1 - i;
    }
    if (len - k >= 5 && s[k] == 'u' && s[k + 1] == '0' && s[k + 2] == '0') {
      int v = hex2(s, len, k + 3);
      return v >= 0 && (*c = escaped((unsigned)v)) ? k + 5 - i : 0;
    }
    return 0;
  }
  case '&': { /* XML: &#x2B; and &#43;, with leading zeros; HTML's names */
    size_t j = i + 1, digits = 0;
    unsigned long v = 0;
    if (j >= len || s[j++] != '#')
      return named_ref(s, len, i, c);
    int hex = j < len && (s[j] == 'x' || s[j] == 'X');
    j += (size_t)hex;
    for (; j < len && digits < 8 && s[j] != ';'; j++, digits++) {
      int d = hex ? ll_hexval(s[j])
                  : (s[j] >= '0' && s[j] <= '9' ? s[j] - '0' : -1);
      if (d < 0)
        return 0;
      v = v * (hex ? 16u : 10u) + (unsigned long)d;
    }
    if (!digits || j >= len || s[j] != ';')
      return 0;
    return (*c = escaped(v)) ? j + 1 - i : 0;
  }
  default:
    return 0;
  }
}

/* How many characters of d from d[j] the text at s[i] spells, in either
 * case (a WAF or a log may lower or raise an echo), and where that ends
 * (*end); *exact: how many of the first of them are in d's own case. */
static size_t spelled_from(const char *s, size_t len, size_t i, const char *d,
                           size_t j, size_t *end, size_t *exact) {
  size_t n = 0, u;
  char c;
  *exact = 0;
  while (d[j + n] && i < len && (u = sig_unit(s, len, i, &c)) != 0 &&
         fold(c) == fold(d[j + n])) {
    if (*exact == n && c == d[j + n])
      (*exact)++;
    i += u;
    n++;
  }
  *end = i;
  return n;
}

size_t ll_san_sig_at(const char *s, size_t len, size_t i, const char *d) {
  size_t dl = strlen(d), best = 0, e, exact;
  char c;
  /* 8 characters in the signature's own case; in another case each says
   * less (36 letters and digits, not 64), so 12 */
  size_t need = dl < LL_SANITIZE_SIG_MIN ? dl : LL_SANITIZE_SIG_MIN;
  size_t need_folded =
      dl < LL_SANITIZE_SIG_FOLDED ? dl : LL_SANITIZE_SIG_FOLDED;
  if (!dl || i >= len || !sig_unit(s, len, i, &c))
    return 0;
  char other = (char)other_case(c);
  for (int pass = 0; pass < (other != c ? 2 : 1); pass++) {
    char want = pass ? other : c;
    for (const char *p = d; (p = memchr(p, want, dl - (size_t)(p - d))); p++) {
      size_t j = (size_t)(p - d);
      size_t n = spelled_from(s, len, i, d, j, &e, &exact);
      if ((exact >= need || n >= need_folded) && e > best)
        best = e;
    }
  }
  return best;
}

void ll_san_sig_starts(const char *d, unsigned char first[256]) {
  for (const char *p = d; *p; p++)
    first[(unsigned char)*p] = first[other_case(*p)] = 1;
  for (const char *p = "+ -/_=%\\&"; *p; p++)
    first[(unsigned char)*p] = 1;
}

/* A signature character, case folded, as 0..38 (digits, letters, then
 * '+', '/', '='). */
static unsigned sym(char c) {
  return c >= '0' && c <= '9'   ? (unsigned)(c - '0')
         : c >= 'a' && c <= 'z' ? (unsigned)(c - 'a' + 10)
         : c >= 'A' && c <= 'Z' ? (unsigned)(c - 'A' + 10)
         : c == '+'             ? 36u
         : c == '/'             ? 37u
                                : 38u;
}

size_t ll_san_sig_find(const char *s, size_t len, const char *d, size_t *end) {
  /* every match of two or more characters starts with a pair of them that
   * d holds in a row (either case): a table of those pairs, made once a
   * call, lets most offsets go after two units are read */
  unsigned char pair[39 * 39 / 8 + 1] = {0};
  size_t dl = strlen(d);
  if (dl < 2) {
    for (size_t i = 0; i < len; i++)
      if ((*end = ll_san_sig_at(s, len, i, d)) != 0)
        return i;
    return len;
  }
  for (size_t j = 0; j + 1 < dl; j++) {
    unsigned k = sym(d[j]) * 39 + sym(d[j + 1]);
    pair[k / 8] |= (unsigned char)(1u << (k % 8));
  }
  /* the unit at i (u1, c1) and the one after it (u2, c2); when u1 is one
   * byte, the next offset's first unit is this one's second */
  size_t u1 = 0, u2 = 0;
  char c1 = 0, c2 = 0;
  for (size_t i = 0; i < len; i++) {
    if (i > 0 && u1 == 1) {
      u1 = u2;
      c1 = c2;
    } else {
      u1 = sig_unit(s, len, i, &c1);
    }
    u2 = u1 && i + u1 < len ? sig_unit(s, len, i + u1, &c2) : 0;
    if (!u2)
      continue;
    unsigned k = sym(c1) * 39 + sym(c2);
    if ((pair[k / 8] >> (k % 8) & 1) &&
        (*end = ll_san_sig_at(s, len, i, d)) != 0)
      return i;
  }
  return len;
}
