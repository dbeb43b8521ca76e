/* The small text rules of bytes from outside, one copy each (text.h). */
#include "text.h"

#include <stdint.h>
#include <string.h>

int ll_utf8_valid(const unsigned char *s, size_t n) {
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

int ll_hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

int ll_pct_decode(const char *src, size_t len, char *dst, size_t cap,
                  size_t *out_len) {
  size_t n = 0;
  if (cap == 0)
    return -1;
  for (size_t i = 0; i < len; i++) {
    int c = (unsigned char)src[i];
    if (c == '%') {
      int hi = i + 2 < len ? ll_hexval(src[i + 1]) : -1;
      int lo = hi < 0 ? -1 : ll_hexval(src[i + 2]);
      if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
        return -1;
      c = hi * 16 + lo;
      i += 2;
    }
    if (n + 1 >= cap)
      return -1;
    dst[n++] = (char)c;
  }
  dst[n] = '\0';
  if (out_len)
    *out_len = n;
  return 0;
}

/* The bytes cJSON's print_string_ptr escapes: '"', '\\' and every byte
 * below 32 (five of them with a short escape, the rest as \u00xx). */
static const unsigned char esc[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, ['\\'] = 1};

/* The length of the run at p[0..len) without a byte to escape: eight bytes
 * at a time while none of them is '"', '\\' or below 32 (the word tests
 * have no false negatives, and flag a word only when it holds such a
 * byte), then byte by byte through the table, which decides. */
static size_t plain_run(const unsigned char *p, size_t len) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    uint64_t v, q, b;
    memcpy(&v, p + j, 8);
    q = v ^ (ones * '"');
    b = v ^ (ones * '\\');
    if ((((q - ones) & ~q) | ((b - ones) & ~b) | ((v - ones * 32) & ~v)) &
        highs)
      break;
  }
  while (j < len && !esc[p[j]])
    j++;
  return j;
}

void ll_json_put_string(ll_buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t len = strlen((const char *)p);
  char *d = ll_buf_room(b, len * 6 + 2);
  if (!d)
    return;
  char *o = d;
  *o++ = '"';
  for (size_t i = 0; i < len;) {
    size_t j = i + plain_run(p + i, len - i);
    memcpy(o, p + i, j - i);
    o += j - i;
    if (j == len)
      break;
    unsigned char c = p[j];
    i = j + 1;
    *o++ = '\\';
    switch (c) {
    case '\\':
      *o++ = '\\';
      break;
    case '"':
      *o++ = '"';
      break;
    case '\b':
      *o++ = 'b';
      break;
    case '\f':
      *o++ = 'f';
      break;
    case '\n':
      *o++ = 'n';
      break;
    case '\r':
      *o++ = 'r';
      break;
    case '\t':
      *o++ = 't';
      break;
    default:
      *o++ = 'u';
      *o++ = '0';
      *o++ = '0';
      *o++ = hex[c >> 4];
      *o++ = hex[c & 15];
    }
  }
  *o++ = '"';
  b->n += (size_t)(o - d);
  b->p[b->n] = '\0';
}
