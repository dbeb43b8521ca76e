/* Invariant 15, the run touches only the object it created, from ledger rows
 * alone (core/judgement/harm.c and the guard), each ledger re-derived with
 * fill=0 as verify does:
 * - a reconcile adopts the ETag it read as the run's own only when a write
 *   of the run was answered with it, or when it read back the very bytes a
 *   doubtful Put of the run declared; another writer's object (even with
 *   the same bytes) is left for the operator, and the run holds;
 * - an answer that names another ETag, or finds the blob leased while no
 *   lease of the run can be current, holds the run before anything more
 *   is sent;
 * - no lease operation and no Delete before the lifecycle's own create
 *   (If-None-Match: *) was accepted and read back, nor after the run's own
 *   Delete of it. */
#include <string.h>

#include "guard.h"
#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END_STEPS                                                              \
  { S_END, NULL, 0, 0, NULL, 0, 0 }
#define CREATE(st, code)                                                       \
  { S_PUT, NULL, 0, st, code, F_CREATE, 0 }
#define CREATEF(st, code, f)                                                   \
  { S_PUT, NULL, 0, st, code, F_CREATE | (f), 0 }
#define DELETE_IF(st, code)                                                    \
  { S_DELETE, NULL, 0, st, code, F_IF_MATCH, 0 }
#define FRESH PREFLIGHT(404, "BlobNotFound")
#define REQ(op, actor, lease, bound)                                           \
  { op, actor, lease, bound, -1, 0, 0 }

static const ll_guard_req DELETE_REQ = REQ(LL_OP_DELETE_BLOB, "A", NULL, 0);

/* The five lease operations a script can order, each as C would check it. */
static const struct {
  const char *name;
  ll_guard_req req;
} LEASE_OPS[] = {
    {"Lease Acquire", REQ(LL_OP_LEASE_ACQUIRE, "A", "A", 1)},
    {"Lease Break", REQ(LL_OP_LEASE_BREAK, "operator", NULL, 0)},
    {"Lease Change", REQ(LL_OP_LEASE_CHANGE, "A", "A", 1)},
    {"Lease Release", REQ(LL_OP_LEASE_RELEASE, "A", "A", 1)},
    {"Lease Renew", REQ(LL_OP_LEASE_RENEW, "A", "A", 1)},
    {"a lease-table cell's acquire",
     {LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, 0, 1}},
};
#define N_LEASE_OPS (sizeof LEASE_OPS / sizeof LEASE_OPS[0])

static void rows(ll_rb *b, const ll_step *steps) {
  rb_init(b, &LL_AZURE, 1);
  for (const ll_step *s = steps; s->op != S_END; s++)
    rb_step(b, s);
  CHECK_INT(b->failed, 0);
}

static cJSON *step(ll_rb *b, ll_step s) {
  return rb_step(b, &s);
}

/* A lifecycle whose create was accepted and read back: the run's blob. */
static const ll_step CREATED[] = {FRESH, LIFE(0), CREATE(201, NULL), READ(0),
                                  END_STEPS};

/* The run holds for why: no Delete and no lease operation is sent, and
 * the decision is HOLD with why among its reasons and the blob left for
 * the operator. */
static void held(ll_rb *b, const char *why) {
  ll_error err;
  CHECK_INT(rb_guard(b, &DELETE_REQ, &err), LL_E_HOLD);
  CHECK(strstr(err.message, "leave the blob for the operator") != NULL);
  for (size_t k = 0; k < N_LEASE_OPS; k++)
    CHECK_INT(rb_guard(b, &LEASE_OPS[k].req, &err), LL_E_HOLD);
  cJSON *d = rb_decide(b);
  CHECK_STR(rb_str(d, "decision"), "HOLD");
  CHECK(rb_any_contains(cJSON_GetObjectItem(d, "reasons"), why));
  CHECK(rb_any_contains(cJSON_GetObjectItem(d, "reasons"),
                        "the blob is left for the operator"));
}

/* H1. The other writer's object answers the reconcile's reads: the same
 * declared bytes (the canonical payload names no run), another ETag. */
static void test_foreign_object_not_adopted(void) {
  static const struct {
    const char *name;
    ll_step before[8]; /* after FRESH, LIFE(0), the create and its read */
    long content;      /* revision whose bytes the reconcile reads */
    const char *result;
  } t[] = {
      {"no doubt: the blob was replaced after the read-back",
       {END_STEPS},
       0,
       "MATCH"},
      {"a doubtful Put, the old revision's bytes under another ETag",
       {PUTF(NULL, 1, 0, NULL, F_UNKNOWN), END_STEPS},
       0,
       "DOUBTFUL_WRITE_NOT_PRESENT"},
      {"a doubtful acquire, the bytes under another ETag",
       {ACQF("A", 0, NULL, F_UNKNOWN), END_STEPS},
       0,
       "MATCH"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int before = ll_test_fail;
    ll_rb b;
    rows(&b, CREATED);
    CHECK_STR(ll_model_cleanup_etag(b.m), RB_ETAG);
    for (const ll_step *s = t[i].before; s->op != S_END; s++)
      rb_step(&b, s);
    int doubts = ll_model_doubts(b.m);
    step(&b, (ll_step)PROPS("available", "unlocked"));
    step(&b, (ll_step)READF(t[i].content, F_ETAG_OTHER));
    cJSON *rc = step(&b, (ll_step)RECON);
    CHECK_STR(rb_str(rc, "result"), t[i].result);
    /* the reconcile says whose ETag it read, and settles nothing */
    CHECK_STR(rb_str(rc, "etag_not_adopted"), RB_ETAG_OTHER);
    CHECK(!ll_model_reconciled(b.m));
    CHECK_INT(ll_model_doubts(b.m), doubts);
    /* no ETag to condition a mutation on: nothing is sent */
    CHECK_STR(ll_model_cleanup_etag(b.m), "");
    held(&b, "the blob's ETag " RB_ETAG_OTHER " is none this run's writes "
             "were answered with");
    if (ll_test_fail > before)
      fprintf(stderr, "  in foreign-object case \"%s\"\n", t[i].name);
    rb_free(&b);
  }
}

/* What a reconcile may still adopt: an ETag a write of the run was
 * answered with, or the ETag of the very bytes a doubtful Put (or create)
 * of the run declared. */
static void test_own_object_adopted(void) {
  static const struct {
    const char *name;
    ll_step steps[10];
    const char *result, *etag;
  } t[] = {
      {"a doubtful Put committed: its declared bytes, a new ETag",
       {FRESH, LIFE(0), CREATE(201, NULL), READ(0),
        PUTF(NULL, 1, 0, NULL, F_UNKNOWN), PROPS("available", "unlocked"),
        READF(1, F_ETAG_OTHER), RECON, END_STEPS},
       "DOUBTFUL_WRITE_COMMITTED",
       RB_ETAG_OTHER},
      {"a doubtful create committed",
       {FRESH, LIFE(0), CREATEF(0, NULL, F_UNKNOWN),
        PROPS("available", "unlocked"), READF(0, F_ETAG_OTHER), RECON,
        END_STEPS},
       "DOUBTFUL_WRITE_COMMITTED",
       RB_ETAG_OTHER},
      {"a doubtful Put not there: the create's ETag, answered to the run",
       {FRESH, LIFE(0), CREATE(201, NULL), READ(0),
        PUTF(NULL, 1, 0, NULL, F_UNKNOWN), PROPS("available", "unlocked"),
        READ(0), RECON, END_STEPS},
       "DOUBTFUL_WRITE_NOT_PRESENT",
       RB_ETAG},
      {"an accepted create whose read-back was lost to a crash",
       {FRESH, LIFE(0), CREATE(201, NULL), PROPS("available", "unlocked"),
        READ(0), RECON, END_STEPS},
       "MATCH",
       RB_ETAG},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int before = ll_test_fail;
    ll_rb b;
    rows(&b, t[i].steps);
    const cJSON *rc =
        cJSON_GetArrayItem(b.rows, -1 + (int)cJSON_GetArraySize(b.rows));
    CHECK_STR(rb_str(rc, "record"), "reconcile");
    CHECK_STR(rb_str(rc, "result"), t[i].result);
    CHECK(cJSON_GetObjectItem(rc, "etag_not_adopted") == NULL);
    CHECK(ll_model_reconciled(b.m));
    CHECK_INT(ll_model_doubts(b.m), 0);
    CHECK_STR(ll_model_cleanup_etag(b.m), t[i].etag);
    ll_error err;
    CHECK_INT(rb_guard(&b, &DELETE_REQ, &err), LL_OK);
    CHECK_INT(rb_guard(&b, &LEASE_OPS[0].req, &err), LL_OK);
    cJSON *d = rb_decide(&b);
    CHECK(!rb_any_contains(cJSON_GetObjectItem(d, "reasons"),
                           "none this run's writes"));
    if (ll_test_fail > before)
      fprintf(stderr, "  in own-object case \"%s\"\n", t[i].name);
    rb_free(&b);
  }
}

/* H2. A lease operation before the lifecycle's own create was accepted and
 * read back is refused by the guard, as is one after the run deleted its
 * blob; so is a Delete (LL_E_DELETE_UNCONFIRMED). */
static void test_lease_before_create(void) {
  static const struct {
    const char *name;
    ll_step steps[10];
    ll_code lease_code, delete_code;
  } t[] = {
      {"nothing created yet", {FRESH, LIFE(0), END_STEPS}, -1, -1},
      {"no lifecycle declared", {FRESH, END_STEPS}, -1, -1},
      {"the create refused: someone else's blob",
       {FRESH, LIFE(0), CREATE(409, "BlobAlreadyExists"), END_STEPS},
       LL_E_TARGET_EXISTS,
       LL_E_TARGET_EXISTS},
      {"the create accepted, not read back",
       {FRESH, LIFE(0), CREATE(201, NULL), END_STEPS},
       LL_E_UNRECONCILED,
       LL_E_UNRECONCILED},
      {"the create read back as other bytes",
       {FRESH, LIFE(0), CREATE(201, NULL), READF(0, F_GARBAGE), END_STEPS},
       LL_E_UNRECONCILED,
       LL_E_UNRECONCILED},
      {"after the run's own Delete",
       {FRESH, LIFE(0), CREATE(201, NULL), READ(0), DELETE_IF(202, NULL),
        END_STEPS},
       -1,
       -1},
      {"a new lifecycle after the confirmed Delete",
       {FRESH,
        LIFE(0),
        CREATE(201, NULL),
        READ(0),
        DELETE_IF(202, NULL),
        {S_READ, NULL, 0, 404, "BlobNotFound", 0, 0},
        LIFE(0),
        END_STEPS},
       -1,
       -1},
      {"created and read back",
       {FRESH, LIFE(0), CREATE(201, NULL), READ(0), END_STEPS},
       LL_OK,
       LL_OK},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int before = ll_test_fail;
    ll_rb b;
    rows(&b, t[i].steps);
    ll_error err;
    for (size_t k = 0; k < N_LEASE_OPS; k++) {
      ll_status st = rb_guard(&b, &LEASE_OPS[k].req, &err);
      if (t[i].lease_code != (ll_code)-1) {
        CHECK_INT(st, t[i].lease_code);
        continue;
      }
      /* the code by its name: LL_E_NOT_CREATED, invariant 15 */
      CHECK_STR(ll_code_name(st), "LL_E_NOT_CREATED");
      CHECK_INT(ll_guard_invariant(err.code), 15);
      CHECK_INT(ll_code_exit(err.code), 64);
      CHECK(strstr(err.message, "refused (invariant 15): the lifecycle's own "
                                "create (If-None-Match: *) has not been "
                                "accepted and read back") != NULL);
      if (ll_test_fail > before)
        fprintf(stderr, "  %s: %s\n", LEASE_OPS[k].name, err.message);
    }
    ll_status st = rb_guard(&b, &DELETE_REQ, &err);
    if (t[i].delete_code != (ll_code)-1) {
      CHECK_INT(st, t[i].delete_code);
    } else {
      CHECK_INT(st, LL_E_DELETE_UNCONFIRMED);
      CHECK_INT(ll_guard_invariant(err.code), 15);
    }
    rb_decide(&b);
    if (ll_test_fail > before)
      fprintf(stderr, "  in lease-order case \"%s\"\n", t[i].name);
    rb_free(&b);
  }
}

/* H3. Another writer's object, or another party's lease, seen in an
 * answer before any reconcile: the run holds at once, and neither a lease
 * operation (a break above all) nor a Delete is sent. */
static void test_foreign_seen(void) {
  static const struct {
    const char *name;
    ll_step steps[10]; /* after FRESH, LIFE(0), the create and its read */
    const char *why;
  } t[] = {
      {"the blob replaced, seen by a properties read",
       {PROPSF("available", "unlocked", F_ETAG_OTHER), END_STEPS},
       "(Get Blob Properties): the blob's ETag " RB_ETAG_OTHER
       " is none this run's writes were answered with"},
      {"the blob replaced, seen in an acquire's answer",
       {ACQF("A", 201, NULL, F_ETAG_OTHER), END_STEPS},
       "(Lease Acquire): the blob's ETag " RB_ETAG_OTHER " is none"},
      {"the blob replaced: the acquire refused by its If-Match",
       {ACQF("A", 412, "ConditionNotMet", F_IF_MATCH), END_STEPS},
       "(Lease Acquire): refused 412 ConditionNotMet on If-Match " RB_ETAG},
      {"the blob replaced: the break refused by its If-Match",
       {ACQ("A", 201, NULL),
        {S_BREAK, NULL, 30, 412, "ConditionNotMet", F_IF_MATCH, 0},
        END_STEPS},
       "(Lease Break): refused 412 ConditionNotMet on If-Match " RB_ETAG},
      {"leased while the run took no lease",
       {PROPS("leased", "locked"), END_STEPS},
       "the blob is leased, but no lease of this run can be current (none "
       "was taken in this lifecycle)"},
      {"breaking while the run took no lease",
       {PROPS("breaking", "locked"), END_STEPS},
       "the blob is breaking, but no lease of this run can be current"},
      {"leased again after the run released its lease",
       {ACQ("A", 201, NULL), RELEASE("A", 200), PROPS("leased", "locked"),
        END_STEPS},
       "(the run's lease was released or ended)"},
      {"leased again after the run's lease was broken",
       {ACQ("A", 201, NULL), PROPS("leased", "locked"), BREAK(0),
        PROPS("broken", "unlocked"), PROPS("leased", "locked"), END_STEPS},
       "(the run's lease was broken)"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    int before = ll_test_fail;
    ll_rb b;
    rows(&b, CREATED);
    ll_error err;
    CHECK_INT(rb_guard(&b, &LEASE_OPS[1].req, &err), LL_OK);
    for (const ll_step *s = t[i].steps; s->op != S_END; s++)
      rb_step(&b, s);
    held(&b, t[i].why);
    if (ll_test_fail > before)
      fprintf(stderr, "  in foreign-seen case \"%s\"\n", t[i].name);
    rb_free(&b);
  }
}

/* A Put answered without an ETag (a settled lost answer, or a service
 * that leaves it out): its read-back's ETag is then the one every later
 * answer is checked against, not none (helper-35). */
static void test_foreign_after_etagless_put(void) {
  static const ll_step steps[] = {FRESH,
                                  LIFE(0),
                                  CREATE(201, NULL),
                                  READ(0),
                                  PUTF(NULL, 1, 201, NULL, F_NO_ETAG),
                                  PROPSF("available", "unlocked", F_ETAG_OTHER),
                                  READ(1),
                                  PROPS("available", "unlocked"),
                                  END_STEPS};
  ll_rb b;
  rows(&b, steps);
  ll_error err;
  /* the lease operations' If-Match: the ETag the read-back found */
  CHECK_STR(ll_model_lease_etag(b.m), RB_ETAG);
  /* the read-back's own ETag is no stranger; the HEAD before it said
   * nothing yet */
  CHECK_INT(rb_guard(&b, &LEASE_OPS[0].req, &err), LL_OK);
  step(&b, (ll_step)PROPSF("available", "unlocked", F_ETAG_OTHER));
  CHECK_INT(rb_guard(&b, &LEASE_OPS[0].req, &err), LL_E_HOLD);
  cJSON *d = rb_decide(&b);
  CHECK(rb_any_contains(cJSON_GetObjectItem(d, "reasons"),
                        "the blob's ETag " RB_ETAG_OTHER " is none"));
  rb_free(&b);
}

/* The If-Match of the run's acquire and break: the blob's ETag as the
 * run's own writes left it, and none when no write of the run names it. */
static void test_lease_etag(void) {
  ll_rb b;
  rows(&b, CREATED);
  CHECK_STR(ll_model_lease_etag(b.m), RB_ETAG);
  rb_free(&b);
  static const ll_step etagless[] = {FRESH,
                                     LIFE(0),
                                     CREATE(201, NULL),
                                     READ(0),
                                     PUTF(NULL, 1, 201, NULL, F_NO_ETAG),
                                     END_STEPS};
  rows(&b, etagless); /* answered without an ETag, not yet read back */
  CHECK_STR(ll_model_lease_etag(b.m), "");
  rb_free(&b);
  /* ...and read back without one either (helper-36): no answer names the
   * generation, so the acquire and the break are refused, not sent
   * unconditioned; a lease table's cell is not conditioned anyway */
  static const ll_step unnamed[] = {FRESH,
                                    LIFE(0),
                                    CREATE(201, NULL),
                                    READ(0),
                                    PUTF(NULL, 1, 201, NULL, F_NO_ETAG),
                                    READF(1, F_NO_ETAG),
                                    END_STEPS};
  rows(&b, unnamed);
  CHECK_STR(ll_model_lease_etag(b.m), "");
  ll_error err;
  CHECK_INT(rb_guard(&b, &LEASE_OPS[0].req, &err), LL_E_NOT_CREATED);
  CHECK(strstr(err.message, "cannot be conditioned on it (If-Match)") != NULL);
  CHECK_INT(rb_guard(&b, &LEASE_OPS[1].req, &err), LL_E_NOT_CREATED);
  CHECK_INT(rb_guard(&b, &LEASE_OPS[5].req, &err), LL_OK);
  rb_free(&b);
  static const ll_step doubtful[] = {FRESH,
                                     LIFE(0),
                                     CREATE(201, NULL),
                                     READ(0),
                                     PUTF(NULL, 1, 0, NULL, F_UNKNOWN),
                                     END_STEPS};
  rows(&b, doubtful); /* the bytes may have changed: only a reconcile says */
  CHECK_STR(ll_model_lease_etag(b.m), "");
  rb_free(&b);
}

/* A lease the run only saw: A's acquire answer was lost and a read found
 * the blob leased. The reconcile settles the doubt, but the lease may be
 * another party's: no break (helper-35). */
static void test_break_unproven_lease(void) {
  static const ll_step steps[] = {FRESH,
                                  LIFE(0),
                                  CREATE(201, NULL),
                                  READ(0),
                                  ACQF("A", 0, NULL, F_UNKNOWN),
                                  PROPS("leased", "locked"),
                                  READ(0),
                                  RECON,
                                  END_STEPS};
  ll_rb b;
  rows(&b, steps);
  ll_error err;
  CHECK_INT(ll_model_doubts(b.m), 0);
  CHECK_INT(rb_guard(&b, &LEASE_OPS[1].req, &err), LL_E_HOLD);
  CHECK(strstr(err.message, "may be another party's: the blob is left for "
                            "the operator") != NULL);
  rb_free(&b);
  /* the acquire answered: the same read, and the break goes */
  static const ll_step own[] = {FRESH,
                                LIFE(0),
                                CREATE(201, NULL),
                                READ(0),
                                ACQ("A", 201, NULL),
                                PROPS("leased", "locked"),
                                END_STEPS};
  rows(&b, own);
  CHECK_INT(rb_guard(&b, &LEASE_OPS[1].req, &err), LL_OK);
  rb_free(&b);
}

int main(void) {
  test_foreign_object_not_adopted();
  test_own_object_adopted();
  test_lease_before_create();
  test_foreign_seen();
  test_foreign_after_etagless_put();
  test_break_unproven_lease();
  test_lease_etag();
  return ll_test_report("test_harm_own");
}
