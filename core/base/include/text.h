/* The small text rules of bytes that come from outside, one copy each:
 * strict UTF-8, percent-decoding, and a JSON string printed as cJSON
 * prints it (the ledger's lines and the fixtures' files). */
#ifndef LL_TEXT_H
#define LL_TEXT_H

#include <stddef.h>

#include "ll.h"

/* 1 when s[0..n) is strict UTF-8 text: no NUL, no overlong form, no
 * surrogate, nothing past U+10FFFF, no sequence cut at the end. */
int ll_utf8_valid(const unsigned char *s, size_t n);

/* The value of hex digit c (either case), or -1. */
int ll_hexval(char c);

/* Percent-decodes src[0..len) into dst (cap bytes, NUL-terminated): 0, with
 * *out_len set when out_len is given, or -1 on an escape that is not '%'
 * and two hex digits, on %00 (no NUL reaches a decoded value), or when dst
 * has no room. '+' stays '+'. */
int ll_pct_decode(const char *src, size_t len, char *dst, size_t cap,
                  size_t *out_len);

/* Appends s (NULL: "") as a JSON string, byte for byte as cJSON's
 * print_string_ptr writes it: '"', '\\' and the bytes below 32 escaped
 * (\b \f \n \r \t, the rest as \u00xx), every other byte as it is. Runs
 * with nothing to escape are copied whole. Out of memory sets b->oom. */
void ll_json_put_string(ll_buf *b, const char *s);

#endif
