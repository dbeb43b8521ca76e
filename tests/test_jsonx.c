/* jsonx.h's array walk from the end: ll_json_last and ll_json_before visit
 * every item once, newest first, and stop at the first (the ledger's kept
 * rows are walked this way by flow.c and lease_io.c). */
#include "jsonx.h"
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

int main(void) {
  test_walk_back();
  test_empty_and_null();
  return ll_test_report("test_jsonx");
}
