/* The documented baseline (core/judgement/baseline.c, DESIGN.md section 4),
 * through the fold's public interface: one outcome row after hand-built rows
 * (tests/ll_rows.h), filled by ll_model_apply, and its derived fields read
 * back. One row per class of the table (ACCEPTED_WRITE, STATE_OBSERVED,
 * BREAK_ACCEPTED_NOT_COMPLETE, EXPECTED_REJECTION, UNKNOWN_OUTCOME,
 * EVIDENCE_ERROR), the expectation in each lease phase, and discrepancies
 * explained (or not) by the known-deviations table (deviations.c). */
#include <string.h>

#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

/* The marked step of a case: the row whose derived fields are checked. */
#define M_PUT(l, r, st, code, f)                                               \
  { S_PUT, l, r, st, code, f, 1 }
#define M_READ(r, st, code)                                                    \
  { S_READ, NULL, r, st, code, 0, 1 }
#define M_PROPS(s, t)                                                          \
  { S_PROPS, s, 0, 200, t, 0, 1 }
#define M_ACQ(l, st, code, f)                                                  \
  { S_ACQ, l, 0, st, code, f, 1 }
#define M_RENEW(l, st, code)                                                   \
  { S_RENEW, l, 0, st, code, 0, 1 }
#define M_RELEASE(l, st, code)                                                 \
  { S_RELEASE, l, 0, st, code, 0, 1 }
#define M_BREAK(p, st, code)                                                   \
  { S_BREAK, NULL, p, st, code, 0, 1 }
#define M_DELETE(l, st, code, f)                                               \
  { S_DELETE, l, 0, st, code, f, 1 }
#define M_PREFLIGHT(st, code)                                                  \
  { S_PREFLIGHT, NULL, 0, st, code, 0, 1 }

#define M_READ_F(r, f)                                                         \
  { S_READ, NULL, r, 200, NULL, f, 1 }

#define SETUP LIFE(0), PUT(NULL, 0, 201, NULL), READ(0)
#define LEASED SETUP, ACQ("A", 201, NULL)
#define BROKEN0 LEASED, BREAK(0)
/* A's lease broken, seen broken, and B's acquired */
#define B_HOLDS BROKEN0, PROPS("broken", "unlocked"), ACQ("B", 201, NULL)

/* Azurite 3.37 as it answers, but with no x-ms-version on a 2xx either */
static const ll_profile LL_AZURITE_NOVER = {"emulator", NULL,
                                            "Azurite-Blob/3.37.0", NULL, NULL};

typedef struct {
  const char *name;
  const ll_profile *p;
  ll_step steps[24];
  const char *cls;         /* result_classification */
  const char *expectation; /* exact */
  int ndisc;               /* discrepancies */
  const char *disc;        /* substring of the first one's text, or NULL */
  const char *explained;   /* its explained_by, NULL: unexplained */
} bcase;

static const bcase cases[] = {
    /* ---- success, as documented ------------------------------------- */
    {"first write, no lease",
     &LL_AZURE,
     {LIFE(0), M_PUT(NULL, 0, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     0,
     NULL,
     NULL},
    {"a read observes the state",
     &LL_AZURE,
     {LIFE(0), PUT(NULL, 0, 201, NULL), M_READ(0, 200, NULL)},
     "STATE_OBSERVED",
     "200",
     0,
     NULL,
     NULL},
    {"properties read",
     &LL_AZURE,
     {LEASED, M_PROPS("leased", "locked")},
     "STATE_OBSERVED",
     "200",
     0,
     NULL,
     NULL},
    {"the holder writes under its lease",
     &LL_AZURE,
     {LEASED, M_PUT("A", 1, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     0,
     NULL,
     NULL},
    {"a break is accepted, not complete",
     &LL_AZURE,
     {LEASED, M_BREAK(30, 202, NULL)},
     "BREAK_ACCEPTED_NOT_COMPLETE",
     "202",
     0,
     NULL,
     NULL},
    {"acquire after a 0 s break (broken)",
     &LL_AZURE,
     {BROKEN0, M_ACQ("B", 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     0,
     NULL,
     NULL},
    {"an unleased write once broken",
     &LL_AZURE,
     {BROKEN0, M_PUT(NULL, 1, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     0,
     NULL,
     NULL},
    {"the holder renews",
     &LL_AZURE,
     {LEASED, M_RENEW("A", 200, NULL)},
     "ACCEPTED_WRITE",
     "200",
     0,
     NULL,
     NULL},
    {"the holder releases",
     &LL_AZURE,
     {LEASED, M_RELEASE("A", 200, NULL)},
     "ACCEPTED_WRITE",
     "200",
     0,
     NULL,
     NULL},
    {"the holder deletes",
     &LL_AZURE,
     {LEASED, M_DELETE("A", 202, NULL, 0)},
     "ACCEPTED_WRITE",
     "202",
     0,
     NULL,
     NULL},
    {"after a delete a read finds the documented absence",
     &LL_AZURE,
     {SETUP, DELETE(NULL, 202), M_READ(0, 404, "BlobNotFound")},
     "STATE_OBSERVED",
     "404 BlobNotFound",
     0,
     NULL,
     NULL},
    {"the preflight of a fresh target",
     &LL_AZURE,
     {M_PREFLIGHT(404, "BlobNotFound")},
     "STATE_OBSERVED",
     "404 BlobNotFound or ContainerNotFound (a fresh target), or 200 (the "
     "blob exists: the run stops)",
     0,
     NULL,
     NULL},
    /* ---- rejections, as documented ---------------------------------- */
    {"an unleased write while leased",
     &LL_AZURE,
     {LEASED, M_PUT(NULL, 2, 412, "LeaseIdMissing", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     0,
     NULL,
     NULL},
    {"a stale lease's write once broken",
     &LL_AZURE,
     {BROKEN0, M_PUT("A", 2, 412, "LeaseNotPresentWithBlobOperation", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     0,
     NULL,
     NULL},
    {"another writer acquires while leased",
     &LL_AZURE,
     {LEASED, M_ACQ("B", 409, "LeaseAlreadyPresent", 0)},
     "EXPECTED_REJECTION",
     "409 lease-operation family",
     0,
     NULL,
     NULL},
    {"acquire while breaking",
     &LL_AZURE,
     {LEASED, BREAK(30),
      M_ACQ("B", 409, "LeaseIsBreakingAndCannotBeAcquired", 0)},
     "EXPECTED_REJECTION",
     "409 lease-operation family",
     0,
     NULL,
     NULL},
    {"a break with no lease",
     &LL_AZURE,
     {SETUP, M_BREAK(30, 409, "LeaseNotPresentWithLeaseOperation")},
     "EXPECTED_REJECTION",
     "409 lease-operation family",
     0,
     NULL,
     NULL},
    {"a release by a writer that does not hold the lease",
     &LL_AZURE,
     {LEASED, M_RELEASE("B", 409, "LeaseIdMismatchWithLeaseOperation")},
     "EXPECTED_REJECTION",
     "409 lease-operation family",
     0,
     NULL,
     NULL},
    {"the create onto an existing blob (If-None-Match: *)",
     &LL_AZURE,
     {LIFE(0), M_PUT(NULL, 0, 409, "BlobAlreadyExists", F_CREATE)},
     "EXPECTED_REJECTION",
     "201; 409 BlobAlreadyExists if the blob exists",
     0,
     NULL,
     NULL},
    {"the cleanup Delete whose If-Match no longer matches",
     &LL_AZURE,
     {SETUP, M_DELETE(NULL, 412, "ConditionNotMet", F_IF_MATCH)},
     "EXPECTED_REJECTION",
     "202; 412 ConditionNotMet if the blob changed after the read-back",
     0,
     NULL,
     NULL},
    /* ---- answers other than documented: a discrepancy --------------- */
    {"the create refused 412, not 409: still a rejection",
     &LL_AZURE,
     {LIFE(0), M_PUT(NULL, 0, 412, "ConditionNotMet", F_CREATE)},
     "EXPECTED_REJECTION",
     "201; 409 BlobAlreadyExists if the blob exists",
     1,
     "observed 412 ConditionNotMet",
     NULL},
    {"an unleased write accepted while leased",
     &LL_AZURE,
     {LEASED, M_PUT(NULL, 2, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "412 blob-operation lease family",
     1,
     "documented 412 blob-operation lease family, observed 201",
     NULL},
    {"a rejection with a code outside the family",
     &LL_AZURE,
     {LEASED, M_PUT(NULL, 2, 412, "SomethingElse", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     1,
     "observed 412 SomethingElse",
     NULL},
    {"a success where a rejection was documented, on a read: 404",
     &LL_AZURE,
     {SETUP, M_READ(0, 404, "BlobNotFound")},
     "EVIDENCE_ERROR",
     "200",
     1,
     "documented 200, observed 404 BlobNotFound",
     NULL},
    {"the holder's write rejected",
     &LL_AZURE,
     {LEASED, M_PUT("A", 1, 412, "LeaseIdMismatchWithBlobOperation", 0)},
     "EVIDENCE_ERROR",
     "201",
     1,
     "documented 201, observed 412",
     NULL},
    {"a success status other than the documented one",
     &LL_AZURE,
     {LIFE(0), M_PUT(NULL, 0, 200, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     1,
     "documented 201, observed 200",
     NULL},
    /* ---- doubt ------------------------------------------------------ */
    {"a lost response",
     &LL_AZURE,
     {SETUP, M_PUT(NULL, 1, 0, NULL, F_UNKNOWN)},
     "UNKNOWN_OUTCOME",
     "201",
     0,
     NULL,
     NULL},
    {"a server error",
     &LL_AZURE,
     {SETUP, M_PUT(NULL, 1, 503, "ServerBusy", 0)},
     "UNKNOWN_OUTCOME",
     "201",
     0,
     NULL,
     NULL},
    /* ---- evidence errors -------------------------------------------- */
    {"not sent",
     &LL_AZURE,
     {SETUP, M_PUT(NULL, 1, 0, NULL, F_NOT_SENT)},
     "EVIDENCE_ERROR",
     "201",
     0,
     NULL,
     NULL},
    {"two request heads for one attempt",
     &LL_AZURE,
     {SETUP, M_PUT(NULL, 1, 201, NULL, F_EMIT2)},
     "EVIDENCE_ERROR",
     "201",
     1,
     "2 request heads emitted for one attempt",
     NULL},
    {"an acquire answered with another lease ID",
     &LL_AZURE,
     {SETUP, M_ACQ("A", 201, NULL, F_OTHER_ID)},
     "EVIDENCE_ERROR",
     "201",
     1,
     "acquire returned a lease ID other than the proposed one",
     NULL},
    /* ---- versions and the deviations table -------------------------- */
    {"azure answers another x-ms-version: unexplained",
     &LL_AZURE,
     {LIFE(0), M_PUT(NULL, 0, 201, NULL, F_VER_NEW)},
     "EVIDENCE_ERROR",
     "201",
     1,
     "requested x-ms-version 2023-11-03, returned 2026-06-06",
     NULL},
    {"Azurite 3.37 answers 2026-06-06: explained",
     &LL_AZURITE,
     {LIFE(0), M_PUT(NULL, 0, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     1,
     "returned 2026-06-06",
     "azurite-3.37-version-2026-06-06"},
    {"Azurite 3.37 sends no version on a 4xx: explained",
     &LL_AZURITE,
     {LEASED, M_PUT(NULL, 2, 412, "LeaseIdMissing", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     1,
     "returned (none)",
     "azurite-3.37-error-without-version"},
    {"a 2xx without a version is not the 4xx deviation: unexplained",
     &LL_AZURITE_NOVER,
     {LIFE(0), M_PUT(NULL, 0, 201, NULL, 0)},
     "ACCEPTED_WRITE",
     "201",
     1,
     "returned (none)",
     NULL},
    /* ---- the code of a rejection names the lease state --------------- */
    {"A's write under B's lease: the documented mismatch",
     &LL_AZURE,
     {B_HOLDS, M_PUT("A", 6, 412, "LeaseIdMismatchWithBlobOperation", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     0,
     NULL,
     NULL},
    {"A's write under B's lease answered 'no lease on the blob'",
     &LL_AZURE,
     {B_HOLDS, M_PUT("A", 6, 412, "LeaseNotPresentWithBlobOperation", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     1,
     "the code contradicts the modelled lease state",
     NULL},
    {"A's write under B's lease answered 'no lease ID was sent'",
     &LL_AZURE,
     {B_HOLDS, M_PUT("A", 6, 412, "LeaseIdMissing", 0)},
     "EXPECTED_REJECTION",
     "412 blob-operation lease family",
     1,
     "the code contradicts the modelled lease state",
     NULL},
    /* ---- a content read's own lease headers -------------------------- */
    {"a read under B's lease that finds it leased/locked",
     &LL_AZURE,
     {B_HOLDS, PUT("B", 5, 201, NULL), M_READ_F(5, F_LEASE_HELD)},
     "STATE_OBSERVED",
     "200",
     0,
     NULL,
     NULL},
    {"a read under B's lease that finds the blob available/unlocked",
     &LL_AZURE,
     {B_HOLDS, PUT("B", 5, 201, NULL), M_READ_F(5, F_LEASE_FREE)},
     "STATE_OBSERVED",
     "200",
     1,
     "the read contradicts the modelled lease state",
     NULL},
};

static void check_case(const bcase *c) {
  ll_rb b;
  ll_step steps[26];
  size_t n = 0;
  while (c->steps[n].op != S_END)
    n++;
  memcpy(steps, c->steps, n * sizeof steps[0]);
  steps[n] = (ll_step){S_END, NULL, 0, 0, NULL, 0, 0};
  rb_init(&b, c->p, 1);
  const cJSON *row = rb_run(&b, steps);
  int before = ll_test_fail;
  CHECK_INT(b.failed, 0);
  CHECK(row != NULL);
  CHECK_STR(rb_str(row, "result_classification"), c->cls);
  CHECK_STR(rb_str(row, "expectation"), c->expectation);
  const cJSON *disc = cJSON_GetObjectItemCaseSensitive(row, "discrepancy");
  CHECK(cJSON_IsArray(disc));
  CHECK_INT(cJSON_GetArraySize(disc), c->ndisc);
  const cJSON *first = cJSON_GetArrayItem(disc, 0);
  if (c->disc) {
    const char *text = rb_str(first, "text");
    CHECK(text && strstr(text, c->disc));
  }
  if (c->ndisc > 0) {
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(first, "explained_by");
    if (c->explained)
      CHECK_STR(cJSON_IsString(by) ? by->valuestring : NULL, c->explained);
    else
      CHECK(cJSON_IsNull(by));
  }
  /* verify re-derives the same fields from the rows alone */
  ll_error err = {0};
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  if (ll_test_fail != before)
    fprintf(stderr, "  in case: %s\n", c->name);
  rb_free(&b);
}

/* An unexplained discrepancy is a HOLD reason that nothing lifts; an
 * explained one is not. */
static void test_unexplained_holds(void) {
  static const ll_step unexplained[] = {
      LEASED, PUT(NULL, 2, 201, NULL), {S_END, NULL, 0, 0, NULL, 0, 0}};
  static const ll_step explained[] = {LIFE(0),
                                      PUT(NULL, 0, 201, NULL),
                                      READ(0),
                                      {S_END, NULL, 0, 0, NULL, 0, 0}};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, unexplained);
  const char *held = ll_model_hold_reason(b.m);
  CHECK(held && strstr(held, "unexplained discrepancy"));
  rb_free(&b);
  rb_init(&b, &LL_AZURITE, 1);
  rb_run(&b, explained);
  CHECK(ll_model_hold_reason(b.m) == NULL);
  rb_free(&b);
}

int main(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_case(&cases[i]);
  test_unexplained_holds();
  return ll_test_report("test_baseline");
}
