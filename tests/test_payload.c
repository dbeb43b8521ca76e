/* Canonical payload bytes and their hash; refusal of bad declarations. */
#include <string.h>

#include "payload.h"
#include "testlib.h"

static const struct {
  long revision;
  const char *writer;
  const char *bytes;
} good[] = {
    {3, "A",
     "{\"purpose\":\"lease-handoff-lab\",\"revision\":3,\"writer\":\"A\"}"},
    {0, "B",
     "{\"purpose\":\"lease-handoff-lab\",\"revision\":0,\"writer\":\"B\"}"},
    {102, "gap_control-1",
     "{\"purpose\":\"lease-handoff-lab\",\"revision\":102,"
     "\"writer\":\"gap_control-1\"}"},
    {9223372036854775807L, "abcdefghijklmno",
     "{\"purpose\":\"lease-handoff-lab\",\"revision\":9223372036854775807,"
     "\"writer\":\"abcdefghijklmno\"}"},
};

static const struct {
  long revision;
  const char *writer;
  const char *why; /* a word the message must contain */
} bad[] = {
    {1, "", "empty"},
    {1, NULL, "empty"},
    {1, "A B", "[A-Za-z0-9_-]"},
    {1, "abcdefghijklmnop", "16 characters"},
    {1, "A\"", "[A-Za-z0-9_-]"},
    {1, "A\\", "[A-Za-z0-9_-]"},
    {1, "\xc3\xa9", "[A-Za-z0-9_-]"},
    {-1, "A", "negative"},
    {-9223372036854775807L - 1, "A", "negative"},
};

static void test_good(void) {
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    ll_payload p;
    ll_error err = {0};
    CHECK_INT(ll_payload_build(good[i].revision, good[i].writer, &p, &err),
              LL_OK);
    CHECK_STR(p.bytes, good[i].bytes);
    CHECK_INT(p.len, strlen(good[i].bytes));
    CHECK_INT(p.revision, good[i].revision);
    CHECK_STR(p.writer, good[i].writer);
    char want[LL_SHA256_HEX];
    CHECK_INT(ll_sha256_hex(good[i].bytes, strlen(good[i].bytes), want), LL_OK);
    CHECK_STR(p.sha256, want);
  }
}

/* The independent expectation, computed outside this code with
 * printf '%s' '{"purpose":"lease-handoff-lab","revision":3,"writer":"A"}' |
 * sha256sum */
static void test_independent_hash(void) {
  ll_payload p;
  CHECK_INT(ll_payload_build(3, "A", &p, NULL), LL_OK);
  static const char lit[] =
      "{\"purpose\":\"lease-handoff-lab\",\"revision\":3,\"writer\":\"A\"}";
  CHECK_INT(p.len, sizeof lit - 1);
  CHECK(memcmp(p.bytes, lit, sizeof lit - 1) == 0);
  CHECK_STR(p.sha256,
            "b37d76330288835ac843365a9fe38e5500927a1a4677b0709b9b2f28a2075ef0");
}

static void test_bad(void) {
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ll_payload p;
    ll_error err = {0};
    CHECK_INT(ll_payload_build(bad[i].revision, bad[i].writer, &p, &err),
              LL_E_USAGE);
    CHECK_INT(err.code, LL_E_USAGE);
    CHECK(strstr(err.message, bad[i].why) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    CHECK_INT(p.len, 0); /* nothing half-built */
  }
  ll_error err = {0};
  CHECK_INT(ll_payload_build(1, "A", NULL, &err), LL_E_USAGE);
}

int main(void) {
  test_good();
  test_independent_hash();
  test_bad();
  return ll_test_report("test_payload");
}
