/* core/base/text.c: the one copy of each small text rule. Strict UTF-8
 * (what the fixtures' bodies and the Lua JSON boundary both take),
 * percent-decoding (the storage logs' paths and a SAS's fields), and a
 * JSON string printed byte for byte as cJSON prints it, for every byte. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "text.h"

static void test_utf8(void) {
  static const struct {
    const char *s;
    size_t n;
    int ok;
  } rows[] = {
      {"", 0, 1},
      {"plain ascii", 11, 1},
      {"\xc3\xa9", 2, 1},         /* U+00E9 */
      {"\xe2\x82\xac", 3, 1},     /* U+20AC */
      {"\xf0\x9f\x98\x80", 4, 1}, /* U+1F600 */
      {"\xf4\x8f\xbf\xbf", 4, 1}, /* U+10FFFF */
      {"a\0b", 3, 0},             /* NUL */
      {"\xc0\xaf", 2, 0},         /* overlong '/' */
      {"\xe0\x80\xaf", 3, 0},     /* overlong */
      {"\xf0\x80\x80\xaf", 4, 0}, /* overlong */
      {"\xed\xa0\x80", 3, 0},     /* surrogate U+D800 */
      {"\xf4\x90\x80\x80", 4, 0}, /* past U+10FFFF */
      {"\xe2\x82", 2, 0},         /* cut at the end */
      {"\x80", 1, 0},             /* a lone continuation */
      {"\xc3\x28", 2, 0},         /* not a continuation */
      {"\xff", 1, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    int got = ll_utf8_valid((const unsigned char *)rows[i].s, rows[i].n);
    if (got != rows[i].ok)
      fprintf(stderr, "utf8 row %zu\n", i);
    CHECK_INT(got, rows[i].ok);
  }
}

static void test_pct(void) {
  static const struct {
    const char *in, *out;
  } rows[] = {
      {"", ""},         {"a%2Fb", "a/b"}, {"a%2fb+c", "a/b+c"},
      {"%41%42", "AB"}, {"%", NULL},      {"%4", NULL},
      {"a%zz", NULL},   {"%00", NULL},    {"%4g", NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char out[16] = "unchanged";
    size_t n = 99;
    int got =
        ll_pct_decode(rows[i].in, strlen(rows[i].in), out, sizeof out, &n);
    CHECK_INT(got, rows[i].out ? 0 : -1);
    if (rows[i].out) {
      CHECK_STR(out, rows[i].out);
      CHECK_INT((long)n, (long)strlen(rows[i].out));
    }
  }
  char small[4];
  CHECK_INT(ll_pct_decode("abcd", 4, small, sizeof small, NULL), -1);
  CHECK_INT(ll_pct_decode("abc", 3, small, sizeof small, NULL), 0);
  CHECK_STR(small, "abc");
  CHECK_INT(ll_pct_decode("a", 1, small, 0, NULL), -1);
  /* a length, not a NUL, ends the input */
  CHECK_INT(ll_pct_decode("ab%41", 2, small, sizeof small, NULL), 0);
  CHECK_STR(small, "ab");
}

/* Every byte from 1 to 255, alone and amid plain runs of every length
 * around the word size and the short copy's 24 bytes (before it, after
 * it, or both: a byte in the tail past the last whole word too), printed
 * as cJSON prints the same string. */
static void test_json_string(void) {
  for (int c = 1; c < 256; c++) {
    for (size_t k = 0; k < 3 * 40; k++) {
      size_t pad = k % 40, before = k < 80 ? pad : 0,
             after = k < 40 || k >= 80 ? pad : 0;
      char s[96];
      memset(s, 'x', before);
      s[before] = (char)c;
      memset(s + before + 1, 'y', after);
      s[before + after + 1] = '\0';
      ll_buf b = {0};
      ll_json_put_string(&b, s);
      cJSON *j = cJSON_CreateString(s);
      char *want = j ? cJSON_PrintUnformatted(j) : NULL;
      int same = want && b.p && !b.oom && strcmp(b.p, want) == 0;
      if (!same)
        fprintf(stderr, "byte %d pad %zu: %s vs %s\n", c, pad,
                b.p ? b.p : "(null)", want ? want : "(null)");
      CHECK(same);
      free(want);
      cJSON_Delete(j);
      free(b.p);
    }
  }
  ll_buf b = {0};
  ll_json_put_string(&b, NULL);
  CHECK_STR(b.p, "\"\"");
  free(b.p);
}

int main(void) {
  test_utf8();
  test_pct();
  test_json_string();
  return ll_test_report("test_text");
}
