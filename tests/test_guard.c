/* The guard (DESIGN.md section 2): which request may be sent next, judged
 * from a model prepared by applying ledger rows. Every refusal names its
 * invariant through the error code. */
#include <string.h>

#include "guard.h"
#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END_STEPS                                                              \
  { S_END, NULL, 0, 0, NULL, 0, 0 }
#define LEASED_A                                                               \
  LIFE(0), PUT(NULL, 0, 201, NULL), READ(0), ACQ("A", 201, NULL),              \
      PUT("A", 1, 201, NULL), READ(1)
#define GAP_BROKEN                                                             \
  LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),          \
      PUT("A", 101, 201, NULL), READ(101), BREAK(30),                          \
      PROPS("breaking", "locked"), CHAIN_BROKEN
#define AFTER_BROKEN_B                                                         \
  CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),             \
      PUT("B", 5, 201, NULL), READ(5)
#define PUT_REQ(actor, lease, bound, rev, control)                             \
  { LL_OP_PUT_BLOB, actor, lease, bound, rev, control, 0 }
#define REQ(op, actor, lease, bound)                                           \
  { op, actor, lease, bound, -1, 0, 0 }

typedef struct {
  const char *name;
  int manifest;
  ll_step steps[48];
  ll_guard_req req;
  ll_code want;
  const char *message; /* substring of the refusal, NULL for LL_OK */
} guard_case;

static const guard_case cases[] = {
    /* invariant 11: manifest first, permitted actors */
    {"no manifest: even a read is refused",
     0,
     {END_STEPS},
     REQ(LL_OP_GET_PROPERTIES, "observer", NULL, 0),
     LL_E_MANIFEST,
     "before the run manifest"},
    {"no manifest: a write is refused",
     0,
     {END_STEPS},
     PUT_REQ("A", NULL, 0, 0, 0),
     LL_E_MANIFEST,
     "invariant 11"},
    {"actor outside permitted_actors",
     1,
     {LIFE(0)},
     PUT_REQ("C", NULL, 0, 0, 0),
     LL_E_MANIFEST,
     "actor C is not among the manifest's permitted_actors"},
    {"lease alias outside permitted_actors",
     1,
     {LEASED_A},
     REQ(LL_OP_LEASE_RENEW, "A", "Z", 1),
     LL_E_MANIFEST,
     "actor Z"},
    /* reads are always allowed once the manifest is in */
    {"read with an open doubt",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN)},
     REQ(LL_OP_GET_BLOB, "observer", NULL, 0),
     LL_OK,
     NULL},
    {"properties with an open doubt",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN)},
     REQ(LL_OP_GET_PROPERTIES, "observer", NULL, 0),
     LL_OK,
     NULL},
    {"read with an accepted write not yet read back",
     1,
     {LIFE(0), PUT(NULL, 0, 201, NULL)},
     REQ(LL_OP_GET_BLOB, "observer", NULL, 0),
     LL_OK,
     NULL},
    /* invariant 3: the HOLD latch */
    {"put with an open doubt",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN)},
     PUT_REQ("B", "B", 1, 5, 0),
     LL_E_HOLD,
     "Put Blob refused: a request's outcome is unknown (invariant 3)"},
    {"release with an open doubt",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN)},
     REQ(LL_OP_LEASE_RELEASE, "B", "B", 1),
     LL_E_HOLD,
     "run reconcile"},
    {"acquire after a doubtful acquire",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE,
      ACQF("B", 0, NULL, F_UNKNOWN)},
     REQ(LL_OP_LEASE_ACQUIRE, "B", "B", 1),
     LL_E_HOLD,
     "Lease Acquire refused"},
    {"break after a lost properties read",
     1,
     {LEASED_A, PROPSF(NULL, NULL, F_UNKNOWN)},
     REQ(LL_OP_LEASE_BREAK, "operator", NULL, 0),
     LL_E_HOLD,
     "Lease Break refused"},
    {"an EVIDENCE_ERROR mutation latches too",
     1,
     {LEASED_A, PUTF("A", 2, 412, "LeaseIdMissing", F_EMIT2)},
     PUT_REQ("A", "A", 1, 3, 0),
     LL_E_HOLD,
     "invariant 3"},
    {"reconcile lifts the latch",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN), PROPS("leased", "locked"), READ(3),
      RECON},
     PUT_REQ("B", "B", 1, 5, 0),
     LL_OK,
     NULL},
    {"a reconcile without a content read lifts nothing",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQ("B", 201, NULL),
      PUTF("B", 5, 0, NULL, F_UNKNOWN), PROPS("leased", "locked"),
      READF(3, F_UNKNOWN), RECON},
     PUT_REQ("B", "B", 1, 5, 0),
     LL_E_HOLD,
     "invariant 3"},
    /* invariant 3, run-wide: a doubt about the evidence holds for good */
    {"a version mismatch on a read: no break",
     1,
     {LEASED_A, READF(1, F_VER_NEW)},
     REQ(LL_OP_LEASE_BREAK, "operator", NULL, 0),
     LL_E_HOLD,
     "Lease Break refused: the run can only end HOLD (event "},
    {"a read sent twice: no further write",
     1,
     {LEASED_A, READF(1, F_EMIT2)},
     PUT_REQ("A", "A", 1, 2, 0),
     LL_E_HOLD,
     "no reconcile lifts that (invariant 3)"},
    {"an unexplained 409 for stale A: no release by B",
     1,
     {AFTER_BROKEN_B, PUT("A", 6, 409, "LeaseIdMismatchWithBlobOperation"),
      READ(5)},
     REQ(LL_OP_LEASE_RELEASE, "B", "B", 1),
     LL_E_HOLD,
     "unexplained discrepancy"},
    {"the same chain with the documented 412 may release",
     1,
     {AFTER_BROKEN_B, PUT("A", 6, 412, "LeaseIdMismatchWithBlobOperation"),
      READ(5)},
     REQ(LL_OP_LEASE_RELEASE, "B", "B", 1),
     LL_OK,
     NULL},
    {"an EVIDENCE_ERROR mutation still holds after a reconcile",
     1,
     {LEASED_A, PUTF("A", 2, 412, "LeaseIdMissing", F_EMIT2),
      PROPS("leased", "locked"), READ(1), RECON},
     PUT_REQ("A", "A", 1, 3, 0),
     LL_E_HOLD,
     "2 request heads emitted for one attempt"},
    /* invariant 4: reconcile after accept */
    {"acquire before rev 0 is read back",
     1,
     {LIFE(0), PUT(NULL, 0, 201, NULL)},
     REQ(LL_OP_LEASE_ACQUIRE, "A", "A", 1),
     LL_E_UNRECONCILED,
     "accepted revision 0 has not been read back (invariant 4)"},
    {"put before rev 1 is read back",
     1,
     {LIFE(0), PUT(NULL, 0, 201, NULL), READ(0), ACQ("A", 201, NULL),
      PUT("A", 1, 201, NULL)},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_E_UNRECONCILED,
     "accepted revision 1"},
    {"a read of other bytes does not reconcile",
     1,
     {LIFE(0), PUT(NULL, 0, 201, NULL), READF(0, F_GARBAGE)},
     REQ(LL_OP_LEASE_ACQUIRE, "A", "A", 1),
     LL_E_UNRECONCILED,
     "invariant 4"},
    {"put after the read-back",
     1,
     {LEASED_A},
     PUT_REQ("A", "A", 1, 3, 0),
     LL_OK,
     NULL},
    /* invariant 6: declared payloads only */
    {"undeclared revision",
     1,
     {LEASED_A},
     PUT_REQ("A", "A", 1, 7, 0),
     LL_E_UNDECLARED,
     "revision 7 by A was not declared before execution (invariant 6)"},
    {"revision declared for another writer",
     1,
     {LEASED_A},
     PUT_REQ("A", "A", 1, 5, 0),
     LL_E_UNDECLARED,
     "revision 5 by A"},
    {"no revision",
     1,
     {LEASED_A},
     PUT_REQ("A", "A", 1, -1, 0),
     LL_E_UNDECLARED,
     "invariant 6"},
    /* invariant 5: a lease-bound writer keeps its precondition */
    {"bound writer without its lease",
     1,
     {LEASED_A},
     PUT_REQ("A", NULL, 1, 2, 0),
     LL_E_LEASE_PRECONDITION,
     "writer A is bound to a lease and never writes without x-ms-lease-id"},
    {"bound writer without its lease, even as a control",
     1,
     {LEASED_A},
     PUT_REQ("A", NULL, 1, 2, 1),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"unbound put before any lease in the lifecycle",
     1,
     {LIFE(0)},
     PUT_REQ("A", NULL, 0, 0, 0),
     LL_OK,
     NULL},
    {"unbound put while leased, not a control",
     1,
     {LEASED_A},
     PUT_REQ("A", NULL, 0, 2, 0),
     LL_E_LEASE_PRECONDITION,
     "unconditioned write of revision 2 refused"},
    {"unbound put while leased, as the negative control",
     1,
     {LEASED_A},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_OK,
     NULL},
    {"unbound control while the break runs",
     1,
     {LEASED_A, PROPS("leased", "locked"), BREAK(30)},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_OK,
     NULL},
    {"unbound control while observed breaking",
     1,
     {LEASED_A, PROPS("leased", "locked"), BREAK(30),
      PROPS("breaking", "locked")},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_OK,
     NULL},
    {"unbound put after broken, non-destructive lifecycle",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN},
     PUT_REQ("A", NULL, 0, 4, 0),
     LL_E_LEASE_PRECONDITION,
     "lifecycle declared destructive"},
    {"unbound control after broken, non-destructive lifecycle",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN},
     PUT_REQ("A", NULL, 0, 4, 1),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"unbound put after a break of period 0",
     1,
     {LEASED_A, PROPS("leased", "locked"), BREAK(0)},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"unbound put after broken, destructive lifecycle (the gap)",
     1,
     {GAP_BROKEN},
     PUT_REQ("B", NULL, 0, 102, 0),
     LL_OK,
     NULL},
    {"unconditioned delete while leased",
     1,
     {LEASED_A},
     REQ(LL_OP_DELETE_BLOB, "A", NULL, 0),
     LL_E_LEASE_PRECONDITION,
     "unconditioned delete refused while the lease is leased"},
    {"unconditioned delete while the break runs",
     1,
     {LEASED_A, BREAK(30)},
     REQ(LL_OP_DELETE_BLOB, "A", NULL, 0),
     LL_E_LEASE_PRECONDITION,
     "break-sent"},
    {"unconditioned delete after broken",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN},
     REQ(LL_OP_DELETE_BLOB, "A", NULL, 0),
     LL_OK,
     NULL},
    {"delete with the holder's lease",
     1,
     {LEASED_A},
     REQ(LL_OP_DELETE_BLOB, "A", "A", 1),
     LL_OK,
     NULL},
    /* the seed's order: B acquires only after the breaking probe */
    {"acquire by B after the break, before the probe",
     1,
     {LEASED_A, PROPS("leased", "locked"), BREAK(30),
      PROPS("breaking", "locked")},
     REQ(LL_OP_LEASE_ACQUIRE, "B", "B", 1),
     LL_E_ORDER,
     "acquire by B refused: after a break"},
    {"acquire by B after the probe",
     1,
     {CHAIN_SETUP, CHAIN_BREAK, CHAIN_PROBE, PROPS("breaking", "locked")},
     REQ(LL_OP_LEASE_ACQUIRE, "B", "B", 1),
     LL_OK,
     NULL},
    {"acquire by B after a late probe",
     1,
     {LEASED_A, BREAK(30), PROPS("broken", "unlocked"), LATE},
     REQ(LL_OP_LEASE_ACQUIRE, "B", "B", 1),
     LL_OK,
     NULL},
    {"acquire by the breaking holder is not the new writer",
     1,
     {LEASED_A, BREAK(30), PROPS("broken", "unlocked")},
     REQ(LL_OP_LEASE_ACQUIRE, "A", "A", 1),
     LL_OK,
     NULL},
    {"renew by B once its doubtful acquire is reconciled",
     1,
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, CHAIN_STALE, ACQF("B", 0, NULL, F_UNKNOWN),
      PROPS("leased", "locked"), READ(3), RECON},
     REQ(LL_OP_LEASE_RENEW, "B", "B", 1),
     LL_OK,
     NULL},
};

static void test_cases(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const guard_case *c = &cases[i];
    int before = ll_test_fail;
    ll_rb b;
    rb_init(&b, &LL_AZURE, c->manifest);
    rb_run(&b, c->steps);
    CHECK_INT(b.failed, 0);
    ll_error err = {0};
    ll_status st = ll_guard_check(b.m, &c->req, &err);
    CHECK_INT(st, c->want);
    if (c->want == LL_OK) {
      CHECK_INT(err.code, LL_OK);
    } else {
      CHECK_INT(err.code, c->want);
      CHECK(c->message && strstr(err.message, c->message) != NULL);
    }
    if (ll_test_fail > before)
      fprintf(stderr, "  in guard case \"%s\": %s: %s\n", c->name,
              ll_code_name(st), err.message);
    rb_free(&b);
  }
}

/* The guard reads, never writes: asking twice gives the same answer and
 * leaves the model as it was. */
static void test_pure(void) {
  static const ll_step steps[] = {LEASED_A, END_STEPS};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  ll_guard_req r = PUT_REQ("A", NULL, 0, 2, 0);
  ll_error e1 = {0}, e2 = {0};
  CHECK_INT(ll_guard_check(b.m, &r, &e1), LL_E_LEASE_PRECONDITION);
  CHECK_INT(ll_guard_check(b.m, &r, &e2), LL_E_LEASE_PRECONDITION);
  CHECK_STR(e1.message, e2.message);
  CHECK_INT(ll_model_phase(b.m), LL_PH_LEASED);
  CHECK_INT(ll_model_doubts(b.m), 0);
  CHECK_INT(ll_model_unreconciled(b.m), -1);
  /* a NULL error is allowed */
  CHECK_INT(ll_guard_check(b.m, &r, NULL), LL_E_LEASE_PRECONDITION);
  rb_free(&b);
}

/* Every code's invariant (ll_code_invariant: the error tables and the
 * refusal rows); the guard's own mapping gives it only for the codes the
 * guard returns (guard: 1), 0 for the rest. */
static void test_invariant_numbers(void) {
  static const struct {
    ll_code code;
    int inv;
    int guard;
  } t[] = {
      {LL_E_DURABILITY, 2, 0},   {LL_E_HOLD, 3, 1},
      {LL_E_UNRECONCILED, 4, 1}, {LL_E_LEASE_PRECONDITION, 5, 1},
      {LL_E_UNDECLARED, 6, 1},   {LL_E_TOO_LARGE, 7, 0},
      {LL_E_INSECURE, 10, 0},    {LL_E_MANIFEST, 11, 1},
      {LL_E_SCOPE, 14, 1},       {LL_E_TARGET_EXISTS, 15, 1},
      {LL_E_ORDER, 0, 1},        {LL_OK, 0, 0},
      {LL_E_USAGE, 0, 0},        {LL_E_TAMPER, 0, 0},
      {LL_E__COUNT, 0, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    CHECK_INT(ll_code_invariant(t[i].code), t[i].inv);
    CHECK_INT(ll_guard_invariant(t[i].code), t[i].guard ? t[i].inv : 0);
  }
}

int main(void) {
  test_cases();
  test_pure();
  test_invariant_numbers();
  return ll_test_report("test_guard");
}
