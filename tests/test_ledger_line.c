/* The ledger prints each row once with its own printer: it must produce
 * exactly what cJSON_PrintUnformatted produces (the reader's canonical-form
 * check and every existing bundle depend on those bytes), on hostile
 * values too, and refuse what cJSON could print but not read back. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_line.h"
#include "testlib.h"

static int same_as_cjson(const cJSON *item, const char *what) {
  ll_buf b = {0};
  int ok = ll_line_print_json(&b, item);
  char *want = cJSON_PrintUnformatted(item);
  int same = ok && want && b.p && strcmp(b.p, want) == 0;
  if (!same)
    fprintf(stderr, "%s:\n  ours  %s\n  cJSON %s\n", what, b.p ? b.p : "(none)",
            want ? want : "(none)");
  free(b.p);
  cJSON_free(want);
  return same;
}

static void test_strings(void) {
  cJSON *o = cJSON_CreateObject();
  char all[256];
  for (int i = 1; i < 256; i++)
    all[i - 1] = (char)i; /* every byte but NUL, raw UTF-8 and invalid */
  all[255] = '\0';
  cJSON_AddStringToObject(o, "every byte", all);
  cJSON_AddStringToObject(o, "", "");
  cJSON_AddStringToObject(o, "quote\"back\\slash\x01\x1f\x7f", "\b\f\n\r\t/");
  cJSON_AddStringToObject(o, "utf8", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x92\xa9");
  cJSON_AddStringToObject(o, "bad utf8", "\xff\xfe\xc3\x28\xed\xa0\x80");
  cJSON_AddStringToObject(o, "dup", "1");
  cJSON_AddStringToObject(o, "dup", "2");
  cJSON *nullstr = cJSON_CreateString("x");
  cJSON_free(nullstr->valuestring);
  nullstr->valuestring = NULL;
  cJSON_AddItemToObject(o, "null valuestring", nullstr);
  CHECK(same_as_cjson(o, "strings"));
  cJSON_Delete(o);
}

static void test_numbers(void) {
  static const double v[] = {0,
                             -0.0,
                             1,
                             -1,
                             42,
                             2147483647.0,
                             2147483648.0,
                             -2147483648.0,
                             -2147483649.0,
                             999999999999999.0,
                             1e15,
                             1234567890123456.0,
                             -1234567890123456789.0,
                             9007199254740993.0,
                             1e300,
                             -1e-300,
                             0.1,
                             0.1 + 0.2,
                             1.0 / 3,
                             -2.5,
                             123456.789,
                             5e-324,
                             DBL_MAX,
                             -DBL_MAX,
                             DBL_MIN,
                             1776000123456789.0};
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]));
    cJSON *one = cJSON_CreateNumber(v[i]);
    char what[64];
    snprintf(what, sizeof what, "number %.17g", v[i]);
    CHECK(same_as_cjson(one, what));
    cJSON_Delete(one);
  }
  cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
  cJSON_AddItemToArray(a, cJSON_CreateNumber(INFINITY));
  cJSON_AddItemToArray(a, cJSON_CreateNumber(-INFINITY));
  CHECK(same_as_cjson(a, "numbers"));
  cJSON_Delete(a);
}

static void test_nesting(void) {
  cJSON *o = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(o, "nested");
  cJSON_AddItemToArray(arr, cJSON_CreateArray());
  cJSON_AddItemToArray(arr, cJSON_CreateObject());
  cJSON *in = cJSON_CreateArray();
  cJSON_AddItemToArray(in, cJSON_CreateTrue());
  cJSON_AddItemToArray(in, cJSON_CreateFalse());
  cJSON_AddItemToArray(in, cJSON_CreateNull());
  cJSON_AddItemToArray(in, cJSON_CreateString("a\nb"));
  cJSON *deep = cJSON_CreateObject();
  cJSON_AddNumberToObject(deep, "k", -7.25);
  cJSON_AddItemToArray(in, deep);
  cJSON_AddItemToArray(arr, in);
  CHECK(same_as_cjson(o, "nested"));
  CHECK(same_as_cjson(arr, "array"));
  cJSON_Delete(o);

  /* As deep as cJSON reads back, and one deeper. */
  for (int depth = LL_LINE_MAX_DEPTH; depth <= LL_LINE_MAX_DEPTH + 1; depth++) {
    cJSON *top = cJSON_CreateArray(), *cur = top;
    for (int i = 1; i < depth; i++) {
      cJSON *next = cJSON_CreateArray();
      cJSON_AddItemToArray(cur, next);
      cur = next;
    }
    char *text = cJSON_PrintUnformatted(top);
    cJSON *back = text ? cJSON_Parse(text) : NULL;
    ll_buf b = {0};
    int ours = ll_line_print_json(&b, top);
    CHECK_INT(ours, back != NULL); /* refused exactly when cJSON cannot */
    CHECK_INT(ours, depth <= LL_LINE_MAX_DEPTH);
    if (ours)
      CHECK(text && strcmp(b.p, text) == 0);
    free(b.p);
    cJSON_Delete(back);
    cJSON_free(text);
    cJSON_Delete(top);
  }
}

static void test_refusals(void) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddRawToObject(o, "raw", "{\"a\":1}\n");
  ll_buf b = {0};
  CHECK(!ll_line_print_json(&b, o));
  free(b.p);
  cJSON_Delete(o);
}

/* A real row of the ledger shape, parsed from the text cJSON printed, prints
 * back to the same bytes. */
static void test_roundtrip(void) {
  static const char text[] =
      "{\"seq\":12,\"record\":\"outcome\",\"run_id\":\"r-1\",\"fixture_epoch\":"
      "1,\"http_status\":200,\"mono_start_ns\":1776000123456789,"
      "\"mono_end_ns\":2.5e+20,\"lease_real_id\":null,\"ok\":true,\"notes\":"
      "\"caf\\u00e9 \\\"x\\\"\\n\\u0001\",\"a\":[1,-2,0.5,[],{}],"
      "\"prev_hash\":\"00\"}";
  cJSON *row = cJSON_Parse(text);
  CHECK(row != NULL);
  if (row)
    CHECK(same_as_cjson(row, "row"));
  cJSON_Delete(row);
}

/* Strings whose one byte to escape (or none) sits at every offset of an
 * eight-byte word and past it, among plain, high and low bytes: the
 * printer's word-at-a-time skip must stop exactly where cJSON escapes. */
static void test_escape_positions(void) {
  static const unsigned char probes[] = {'"',  '\\', 1,   0x1f, 0x20, 0x7f,
                                         0x80, 0xff, 'a', '!',  0x21, 0x5d};
  char s[40];
  int bad = 0;
  for (size_t len = 1; len < sizeof s && !bad; len++)
    for (size_t at = 0; at < len && !bad; at++)
      for (size_t k = 0; k < sizeof probes && !bad; k++)
        for (unsigned fill = 0; fill < 3 && !bad; fill++) {
          for (size_t i = 0; i < len; i++)
            s[i] = fill == 0 ? 'x' : fill == 1 ? (char)0xc3 : ' ';
          s[at] = (char)probes[k];
          s[len] = '\0';
          cJSON *v = cJSON_CreateString(s);
          if (!v) {
            bad = 1;
            CHECK(v != NULL);
            break;
          }
          int same = same_as_cjson(v, "escape position");
          CHECK(same);
          bad = !same;
          cJSON_Delete(v);
        }
}

int main(void) {
  test_strings();
  test_escape_positions();
  test_numbers();
  test_nesting();
  test_refusals();
  test_roundtrip();
  return ll_test_report("test_ledger_line");
}
