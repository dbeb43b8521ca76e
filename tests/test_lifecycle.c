/* Invariant 14, the guard's scope is the blob: a new lifecycle starts only
 * from a known state and resets neither the HOLD latch, nor the read-back
 * rule, nor "the run has leased this blob"; after finish() nothing more is
 * sent and no second decision is recorded. First judged from ledger rows (the
 * fold and the guard), then end to end through ll_run_* against an in-process
 * wire. */
#include <stdlib.h>
#include <string.h>

#include "fake_wire.h"
#include "guard.h"
#include "jsonx.h"
#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END_STEPS                                                              \
  { S_END, NULL, 0, 0, NULL, 0, 0 }
/* a read answering that the blob does not exist */
#define GONE                                                                   \
  { S_READ, NULL, -1, 404, "BlobNotFound", 0, 0 }
#define LEASED_A                                                               \
  LIFE(0), PUT(NULL, 0, 201, NULL), READ(0), ACQ("A", 201, NULL),              \
      PUT("A", 1, 201, NULL), READ(1)
#define PUT_REQ(actor, lease, bound, rev, control)                             \
  { LL_OP_PUT_BLOB, actor, lease, bound, rev, control, 0 }
#define REQ(op, actor, lease, bound)                                           \
  { op, actor, lease, bound, -1, 0, 0 }

typedef struct {
  const char *name;
  ll_step steps[48];
  ll_code want;
  const char *message; /* substring of the refusal, NULL for LL_OK */
} life_case;

/* May a new lifecycle start after these rows? */
static const life_case life_cases[] = {
    {"the run's first lifecycle", {END_STEPS}, LL_OK, NULL},
    {"after a lifecycle that sent no blob mutation", {LIFE(0)}, LL_OK, NULL},
    {"after an accepted write not read back",
     {LIFE(0), PUT(NULL, 0, 201, NULL)},
     LL_E_UNRECONCILED,
     "accepted revision 0 has not been read back (invariant 4)"},
    {"after a write read back: the blob is there, its end unknown",
     {LIFE(0), PUT(NULL, 0, 201, NULL), READ(0)},
     LL_E_SCOPE,
     "lifecycle 1 did not end in a known state"},
    {"while leased", {LEASED_A}, LL_E_SCOPE, "(lease leased)"},
    {"while the break runs",
     {LEASED_A, BREAK(30)},
     LL_E_SCOPE,
     "(lease break-sent)"},
    {"after broken",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN},
     LL_E_SCOPE,
     "(lease broken)"},
    {"after a delete no read confirmed",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202)},
     LL_E_SCOPE,
     "deleted but not yet confirmed absent"},
    {"after a delete and a read answering 404 BlobNotFound",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE},
     LL_OK,
     NULL},
    {"after a release no read confirmed",
     {LEASED_A, RELEASE("A", 200)},
     LL_E_SCOPE,
     "(lease released)"},
    {"after a release and a read of available/unlocked",
     {LEASED_A, RELEASE("A", 200), PROPS("available", "unlocked")},
     LL_OK,
     NULL},
    {"a write after the confirming read makes the end unknown again",
     {LEASED_A, RELEASE("A", 200), PROPS("available", "unlocked"),
      PUT(NULL, 2, 201, NULL), READ(2)},
     LL_E_SCOPE,
     "invariant 14"},
    {"with an open doubt",
     {LIFE(0), PUTF(NULL, 0, 0, NULL, F_UNKNOWN)},
     LL_E_HOLD,
     "unknown outcome (invariant 3)"},
    {"with a doubt, even after a delete confirmed absent",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE,
      PROPSF(NULL, NULL, F_UNKNOWN)},
     LL_E_HOLD,
     "run reconcile first"},
};

static void test_lifecycle_cases(void) {
  for (size_t i = 0; i < sizeof life_cases / sizeof life_cases[0]; i++) {
    const life_case *c = &life_cases[i];
    int before = ll_test_fail;
    ll_rb b;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, c->steps);
    CHECK_INT(b.failed, 0);
    ll_error err = {0};
    ll_status st = ll_guard_lifecycle(b.m, &err);
    CHECK_INT(st, c->want);
    if (c->want != LL_OK)
      CHECK(c->message && strstr(err.message, c->message) != NULL);
    CHECK_INT(rb_verify(b.rows, &err), LL_OK);
    if (ll_test_fail > before)
      fprintf(stderr, "  in lifecycle case \"%s\": %s: %s\n", c->name,
              ll_code_name(st), err.message);
    rb_free(&b);
  }
}

typedef struct {
  const char *name;
  ll_step steps[48];
  ll_guard_req req;
  ll_code want;
  const char *message;
} carry_case;

/* What a lifecycle row in the ledger does not reset. */
static const carry_case carry_cases[] = {
    {"the read-back rule carries over",
     {LIFE(0), PUT(NULL, 0, 201, NULL), LIFE(0)},
     PUT_REQ("A", NULL, 0, 1, 0),
     LL_E_UNRECONCILED,
     "accepted revision 0"},
    {"a doubt carries over",
     {LIFE(0), PUTF(NULL, 0, 0, NULL, F_UNKNOWN), LIFE(0)},
     PUT_REQ("A", NULL, 0, 1, 0),
     LL_E_HOLD,
     "invariant 3"},
    {"after the first lifecycle leased: an unbound Put is refused",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, LIFE(0)},
     PUT_REQ("A", NULL, 0, 0, 0),
     LL_E_LEASE_PRECONDITION,
     "the run has leased this blob"},
    {"...as a control too: nothing is locked in the new lifecycle",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, LIFE(0)},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"...except the create, once a read confirmed the blob absent",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE, LIFE(0)},
     PUT_REQ("A", NULL, 0, 0, 0),
     LL_OK,
     NULL},
    {"...and only the create: not a second unbound Put",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE, LIFE(0),
      PUT(NULL, 0, 201, NULL), READ(0)},
     PUT_REQ("A", NULL, 0, 2, 0),
     LL_E_LEASE_PRECONDITION,
     "confirmed the blob absent"},
    {"...and not in the lifecycle that deleted",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE},
     PUT_REQ("A", NULL, 0, 0, 0),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"after a confirmed release the blob is there: no unbound Put",
     {LEASED_A, RELEASE("A", 200), PROPS("available", "unlocked"), LIFE(0)},
     PUT_REQ("A", NULL, 0, 2, 0),
     LL_E_LEASE_PRECONDITION,
     "invariant 5"},
    {"the control keeps its place once the new lifecycle leases again",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, DELETE(NULL, 202), GONE, LIFE(0),
      PUT(NULL, 0, 201, NULL), READ(0), ACQ("A", 201, NULL)},
     PUT_REQ("A", NULL, 0, 2, 1),
     LL_OK,
     NULL},
    {"a destructive lifecycle still allows the gap write",
     {LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),
      PUT("A", 101, 201, NULL), READ(101), BREAK(30),
      PROPS("breaking", "locked"), CHAIN_BROKEN},
     PUT_REQ("B", NULL, 0, 102, 0),
     LL_OK,
     NULL},
};

static void test_carry_over(void) {
  for (size_t i = 0; i < sizeof carry_cases / sizeof carry_cases[0]; i++) {
    const carry_case *c = &carry_cases[i];
    int before = ll_test_fail;
    ll_rb b;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, c->steps);
    CHECK_INT(b.failed, 0);
    ll_error err = {0};
    ll_status st = ll_guard_check(b.m, &c->req, &err);
    CHECK_INT(st, c->want);
    if (c->want != LL_OK)
      CHECK(c->message && strstr(err.message, c->message) != NULL);
    if (ll_test_fail > before)
      fprintf(stderr, "  in carry-over case \"%s\": %s: %s\n", c->name,
              ll_code_name(st), err.message);
    rb_free(&b);
  }
}

/* The 404 read after an accepted delete is an observation, stored as the
 * service sent it, with no discrepancy; a 200 there is one. */
static void test_absent_read_rows(void) {
  static const ll_step gone[] = {CHAIN_TO_BROKEN, CHAIN_BROKEN,
                                 DELETE(NULL, 202), GONE, END_STEPS};
  static const ll_step there[] = {CHAIN_TO_BROKEN, CHAIN_BROKEN,
                                  DELETE(NULL, 202), READ(3), END_STEPS};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, gone);
  const cJSON *row = cJSON_GetArrayItem(b.rows, cJSON_GetArraySize(b.rows) - 1);
  CHECK_STR(rb_str(row, "result_classification"), "STATE_OBSERVED");
  CHECK_STR(rb_str(row, "expectation"), "404 BlobNotFound");
  CHECK_STR(rb_str(row, "azure_error_code"), "BlobNotFound");
  CHECK_INT(ll_json_long(row, "http_status", 0), 404);
  CHECK_INT(
      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(row, "discrepancy")),
      0);
  CHECK(ll_model_hold_reason(b.m) == NULL);
  CHECK_INT(ll_model_blob_known_absent(b.m), 1);
  rb_free(&b);

  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, there);
  row = cJSON_GetArrayItem(b.rows, cJSON_GetArraySize(b.rows) - 1);
  CHECK_STR(rb_str(row, "expectation"), "404 BlobNotFound");
  CHECK(rb_any_contains(cJSON_GetObjectItemCaseSensitive(row, "discrepancy"),
                        "documented 404 BlobNotFound, observed 200"));
  CHECK(ll_model_hold_reason(b.m) != NULL);
  CHECK_INT(ll_model_blob_known_absent(b.m), 0);
  rb_free(&b);
}

/* ------------------------------------------------------------ end to end */

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

/* A refusal of a new lifecycle: code, invariant, a refusal row, no
 * lifecycle row, nothing sent. */
static void refused_lifecycle(ll_run *r, fake_wire *w, ll_code code, int inv,
                              const char *needle) {
  int lifecycles = fw_count(r, "lifecycle"), sent = w->requests;
  ll_error err = {0};
  CHECK_INT(ll_run_lifecycle(r, 0, "spec", NULL, &err), code);
  CHECK(strstr(err.message, needle) != NULL);
  const cJSON *last = fw_last(r);
  CHECK_STR(ll_json_str(last, "record"), "refusal");
  CHECK_STR(ll_json_str(last, "operation"), "Lifecycle");
  CHECK_STR(ll_json_str(last, "code"), ll_code_name(code));
  CHECK_INT(ll_json_long(last, "invariant", -1), inv);
  CHECK_INT(fw_count(r, "lifecycle"), lifecycles);
  CHECK_INT(w->requests, sent);
}

static void declare(ll_run *r, long rev, const char *writer) {
  ll_error err = {0};
  CHECK_INT(ll_run_declare(r, rev, writer, NULL, &err), LL_OK);
}

static void test_run_lifecycles(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, path("ev-life"), "life.json", path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "open: %s\n", err.message);
    return;
  }
  for (long rev = 0; rev <= 3; rev++)
    declare(r, rev, "A");
  CHECK_INT(ll_run_bind(r, "A", &err), LL_OK);
  CHECK_INT(
      fw_send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, NULL, &err),
      LL_OK);
  CHECK_INT(ll_run_lifecycle(r, 0, "first", NULL, &err), LL_OK);
  /* item 3, first attack: a write not read back */
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err), LL_OK);
  refused_lifecycle(r, &w, LL_E_UNRECONCILED, 4, "not been read back");
  CHECK_INT(fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err),
            LL_OK);
  /* second attack: a lease taken and broken */
  CHECK_INT(fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err),
            LL_OK);
  CHECK_INT(fw_send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, NULL, &err),
            LL_OK);
  CHECK_INT(
      fw_send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, NULL, &err),
      LL_OK);
  CHECK_STR(ll_phase_name(ll_model_phase(ll_run_model(r))), "broken");
  refused_lifecycle(r, &w, LL_E_SCOPE, 14, "(lease broken)");
  CHECK_INT(fw_send(r, LL_OP_DELETE_BLOB, "A", NULL, 0, -1, NULL, &err), LL_OK);
  refused_lifecycle(r, &w, LL_E_SCOPE, 14, "not yet confirmed absent");
  cJSON *row = NULL;
  CHECK_INT(
      fw_send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, &row, &err),
      LL_OK);
  CHECK_STR(ll_json_str(row, "result_classification"), "STATE_OBSERVED");
  CHECK_STR(ll_json_str(row, "azure_error_code"), "BlobNotFound");
  cJSON_Delete(row);
  CHECK_INT(ll_run_lifecycle(r, 0, "second", NULL, &err), LL_OK);
  CHECK_INT(ll_model_first_write_pending(ll_run_model(r)), 1);
  /* the create is the one unbound Put the new lifecycle allows */
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err), LL_OK);
  CHECK_INT(ll_model_first_write_pending(ll_run_model(r)), 0);
  CHECK_INT(fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err),
            LL_OK);
  int sent = w.mutations;
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 2, NULL, &err),
            LL_E_LEASE_PRECONDITION);
  CHECK_STR(ll_json_str(fw_last(r), "record"), "refusal");
  CHECK_INT(w.mutations, sent);
  CHECK_INT(ll_model_run_leased(ll_run_model(r)), 1);
  ll_run_close(r);
  fw_cleanup(&w);
}

static void test_finish_seals(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, path("ev-seal"), "seal.json", path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r)
    return;
  declare(r, 0, "A");
  w.lose_next_mutation = 1;
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err),
            LL_E_TRANSPORT);
  refused_lifecycle(r, &w, LL_E_HOLD, 3, "run reconcile first");
  cJSON *dec = NULL;
  CHECK_INT(ll_run_decide(r, 1, &dec, &err), LL_OK);
  CHECK_STR(ll_json_str(dec, "decision"), "HOLD");
  CHECK_INT(ll_json_long(dec, "open_doubts", -1), 1);
  cJSON_Delete(dec);
  int sent = w.requests, intents = fw_count(r, "intent");
  /* after the decision: refusals only, nothing sent, no second decision */
  CHECK_INT(
      fw_send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, NULL, &err),
      LL_E_ORDER);
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err),
            LL_E_ORDER);
  CHECK_STR(ll_json_str(fw_last(r), "record"), "refusal");
  CHECK_INT(ll_run_decide(r, 1, &dec, &err), LL_E_ORDER);
  CHECK(dec == NULL);
  refused_lifecycle(r, &w, LL_E_ORDER, 0, "no lifecycle follows a stop");
  CHECK_INT(ll_run_reconcile(r, "late", &dec, &err), LL_E_ORDER);
  cJSON_Delete(dec);
  CHECK_INT(w.requests, sent);
  CHECK_INT(fw_count(r, "intent"), intents);
  CHECK_INT(fw_count(r, "decision"), 1);
  /* a preview decides without recording: still allowed */
  CHECK_INT(ll_run_decide(r, 0, &dec, &err), LL_OK);
  CHECK_INT(ll_json_long(dec, "open_doubts", -1), 1);
  cJSON_Delete(dec);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* A lease-table acquire proposing no ID (the service chooses it, "X"):
 * the ID is bound before its outcome row is written, so the export never
 * carries it, even where the server echoed it in another header the row
 * records (here x-ms-request-id). The table's first lifecycle is run by
 * its engine, cell by cell, up to Available/acquire, no ID. */
int main(void) {
  test_lifecycle_cases();
  test_carry_over();
  test_absent_read_rows();
  root = ll_test_tmpdir();
  if (root) {
    test_run_lifecycles();
    test_finish_seals();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_lifecycle");
}
