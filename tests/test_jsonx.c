/* jsonx.h's array walk from the end: ll_json_last and ll_json_before visit
 * every item once, newest first, and stop at the first (the ledger's kept
 * rows are walked this way by flow.c and lease_io.c). And base's string
 * tests, which every layer's comparisons of row fields go through:
 * ll_streq, ll_strsame and ll_json_is, NULL on either side. */
#include "jsonx.h"
#include "ll.h"
#include "testlib.h"

static void test_walk_back(void) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 1; i <= 3; i++)
    CHECK(ll_json_push(a, cJSON_CreateNumber(i)));
  int want = 3, seen = 0;
  for (const cJSON *it = ll_json_last(a); it; it = ll_json_before(a, it)) {
    CHECK_INT(it->valueint, want);
    want--;
    seen++;
  }
  CHECK_INT(seen, 3);
  /* one item: it is both the last and the first */
  cJSON *one = cJSON_CreateArray();
  CHECK(ll_json_push(one, cJSON_CreateString("x")));
  CHECK(ll_json_last(one) == one->child);
  CHECK(ll_json_before(one, one->child) == NULL);
  cJSON_Delete(one);
  cJSON_Delete(a);
}

static void test_empty_and_null(void) {
  cJSON *a = cJSON_CreateArray();
  CHECK(ll_json_last(a) == NULL);
  CHECK(ll_json_last(NULL) == NULL);
  CHECK(ll_json_before(NULL, NULL) == NULL);
  CHECK(ll_json_before(a, NULL) == NULL);
  cJSON_Delete(a);
}

static void test_string_equality(void) {
  char a[] = "lease", b[] = "lease"; /* equal bytes, two pointers */
  CHECK(ll_streq(a, b));
  CHECK(ll_streq(a, a));
  CHECK(!ll_streq(a, "leased"));
  CHECK(!ll_streq("", a));
  CHECK(ll_streq("", ""));
  /* NULL equals nothing, itself included */
  CHECK(!ll_streq(NULL, a));
  CHECK(!ll_streq(a, NULL));
  CHECK(!ll_streq(NULL, NULL));
  CHECK(!ll_streq("", NULL));    /* an empty string is there; NULL is not */
  CHECK(!ll_streq("leased", a)); /* a prefix either way is not equal */
  /* ll_strsame: two absent strings agree, one absent does not */
  CHECK(ll_strsame(NULL, NULL));
  CHECK(ll_strsame(a, b));
  CHECK(!ll_strsame(NULL, a));
  CHECK(!ll_strsame(a, NULL));
  CHECK(!ll_strsame(a, "leased"));
  CHECK(!ll_strsame("", NULL));
  CHECK(!ll_strsame(NULL, ""));
  cJSON *o = cJSON_CreateObject();
  CHECK(cJSON_AddStringToObject(o, "outcome", "RESPONSE") != NULL);
  CHECK(cJSON_AddNumberToObject(o, "http_status", 200) != NULL);
  CHECK(ll_json_is(o, "outcome", "RESPONSE"));
  CHECK(!ll_json_is(o, "outcome", "NOT_SENT"));
  CHECK(!ll_json_is(o, "http_status", "200")); /* a number is not a string */
  CHECK(!ll_json_is(o, "missing", "RESPONSE"));
  CHECK(!ll_json_is(NULL, "outcome", "RESPONSE"));
  CHECK(!ll_json_is(o, "outcome", NULL));
  cJSON_Delete(o);
}

/* The one rule for "this request carried no lease": every reader of
 * lease_alias_supplied (the baseline, the fold, verify) asks it. */
static void test_lease_none(void) {
  CHECK(ll_lease_none(NULL));
  CHECK(ll_lease_none(""));
  CHECK(ll_lease_none(LL_LEASE_OMITTED));
  CHECK(ll_lease_none("omitted"));
  CHECK(!ll_lease_none("A"));
  CHECK(!ll_lease_none("omitted2")); /* only the sentinel itself */
  CHECK(!ll_lease_none("Omitted"));
}

int main(void) {
  test_walk_back();
  test_empty_and_null();
  test_string_equality();
  test_lease_none();
  return ll_test_report("test_jsonx");
}
