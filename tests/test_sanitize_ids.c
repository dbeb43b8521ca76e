/* Bound lease IDs the table must find whatever their first byte's case,
 * and IDs that share bytes in a value: every projection of the export
 * (copy, shared, in place; core/evidence/sanitize*.c) replaces each by its
 * alias, and the scan finds what the projections would have missed
 * (split from test_sanitize.c). And a message quoting ledger values is
 * made safe to print: no 16 digits of an ID, no sig= value. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "sanitize.h"
#include "testlib.h"

/* {"v": in} through the three projections with n IDs: v becomes want in
 * each. */
static void check_projections(const char *in, const char *const *ids,
                              const char *const *aliases, int n,
                              const char *want) {
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "v", in);
  cJSON *ex = ll_sanitize_row(row, ids, aliases, n);
  cJSON *sh = ll_sanitize_row_shared(row, ids, aliases, n);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(ex, "v")), want);
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(sh, "v")), want);
  cJSON *dead = NULL;
  CHECK(ll_sanitize_row_in_place(row, ids, aliases, n, &dead));
  CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(row, "v")), want);
  cJSON_Delete(dead);
  cJSON_Delete(ex);
  cJSON_Delete(sh);
  cJSON_Delete(row);
}

/* IDs that start with a letter, found where the text holds that letter in
 * the other case: the projections replace them, and the scan finds them.
 * The first IDs are looked up by their first byte in either case; one
 * missing case would leave the ID in place. */
static void test_letter_first_ids(void) {
  static const char *const lid[] = {"Ab8fad5b-d9cb-469f-a165-70867728950e",
                                    "cd9e6679-7425-40de-944b-e07fc1f90ae7"};
  static const char *const lal[] = {"LA", "LC"};
  static const char *const seen[] = {"aB8FAD5B-D9CB-469F-A165-70867728950E",
                                     "CD9E6679742540DE944BE07FC1F90AE7",
                                     "Ab8fad5bd9cb469f" /* cut */};
  static const char *const want[] = {"LA", "LC", "LA"};
  for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) {
    check_projections(seen[i], lid, lal, 2, want[i]);
    char line[96];
    snprintf(line, sizeof line, "{\"v\":\"%s\"}", seen[i]);
    ll_scan_result r;
    ll_sanitize_scan(line, strlen(line), lid, 2, NULL, 0, &r);
    CHECK_INT((int)r.hits, 1);
    CHECK_INT((int)r.kind, LL_SCAN_ID);
    CHECK_INT((int)r.index, want[i][1] == 'A' ? 0 : 1);
    CHECK_INT((int)r.offset, 6);
  }
}

/* Two bound IDs that share bytes in a value (the first ends with what the
 * second starts with): both are replaced, not the first alone with 31
 * digits of the second left where the scan cannot see them. And an ID
 * that starts with '=' (not a GUID: the public API takes any) does not
 * take the first digit of a GUID after "lease=". */
static void test_overlapping_ids(void) {
  static const char *const oid[] = {"11111111-2222-3333-4444-55555555555a",
                                    "a7c3e9f1-5b2d-4e8a-9c6f-0d1b3a5e7f92"};
  static const char *const eid[] = {"a7c3e9f1-5b2d-4e8a-9c6f-0d1b3a5e7f92",
                                    "=a"};
  static const char *const al[] = {"X0", "X1"};
  check_projections("11111111-2222-3333-4444-55555555555a7c3e9f1-5b2d-4e8a-"
                    "9c6f-0d1b3a5e7f92",
                    oid, al, 2, "X0X1");
  check_projections(
      "<1111111122223333444455555555555A7C3E9F15b2d4e8a9c6f0d1b3a5e7f92>", oid,
      al, 2, "<X0X1>");
  check_projections("lease=a7c3e9f1-5b2d-4e8a-9c6f-0d1b3a5e7f92", eid, al, 2,
                    "lease=X0");
}

/* ll_sanitize_message: what verify's problems go through. */
static void test_message(void) {
  static const char *const bound[] = {"0f8fad5b-d9cb-469f-a165-70867728950e"};
  static const struct {
    const char *in, *want;
    int with_ids;
  } c[] = {
      {"row 21: the lease ID sent for alias "
       "0f8fad5b-d9cb-469f-a165-70867728950e is not bound",
       "row 21: the lease ID sent for alias <withheld> is not bound", 0},
      /* 16 flat digits: a bound ID's stretch is withheld, a principal's
       * fingerprint (no bound ID's) is kept */
      {"flat 0F8FAD5BD9CB469FA16570867728950E, cut 0f8fad5bd9cb469f.",
       "flat <withheld>, cut <withheld>.", 1},
      {"cut 0f8fad5bd9cb469f.", "cut 0f8fad5bd9cb469f.", 0},
      {"principal cfab3fdd669e727d of actor B",
       "principal cfab3fdd669e727d of actor B", 1},
      {"a65-70867728950e9", "<withheld>", 0}, /* 17 digits, any */
      /* 15 digits, hyphens apart, event IDs and numbers: kept */
      {"0f8fad5b-d9cb-469 e0023 row 123456789012345 --",
       "0f8fad5b-d9cb-469 e0023 row 123456789012345 --", 1},
      {"hyphens anywhere: 0f-8f-ad-5b-d9-cb-46-9f!",
       "hyphens anywhere: <withheld>!", 0},
      {"url ?sv=2023&sig=AbC%2Bd%2Fe12345xyz&se=1",
       "url ?sv=2023&sig=REDACTED&se=1", 0},
      {"", "", 0},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s", c[i].in);
    ll_sanitize_message(buf, sizeof buf, c[i].with_ids ? bound : NULL,
                        c[i].with_ids ? 1 : 0);
    CHECK_STR(buf, c[i].want);
  }
  /* a message at its buffer's end: cut, still terminated, still safe */
  char small[24] = "id 0f8fad5bd9cb469fa165";
  ll_sanitize_message(small, sizeof small, NULL, 0);
  CHECK_STR(small, "id <withheld>");
}

int main(void) {
  test_message();
  test_letter_first_ids();
  test_overlapping_ids();
  return ll_test_report("test_sanitize_ids");
}
