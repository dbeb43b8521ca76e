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
#include "lease_table.h"
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

static char *path(const char *leaf) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", root, leaf);
  return p;
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
/* The ID the service chose for an acquire with no proposed ID never reaches
 * the export, even echoed in another header the row records. A GUID is
 * bound as X and the table goes on; an ID that is not a GUID, too long or
 * too short, is kept out of both ledgers and stops the table (guid 0). */
static void service_id_case(const char *id, int guid, const char *dir) {
  fake_wire w;
  fw_init(&w);
  w.service_id = id;
  ll_error err = {0};
  char evdir[64], file[64];
  snprintf(evdir, sizeof evdir, "%s", dir);
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = fw_open(&w, path(evdir), file, path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r)
    return;
  ll_flow_plan fp = {.name = "lease-table",
                     .actors = {"A", "B", "operator", "observer"},
                     .nactors = 4,
                     .break_periods = {0, 10},
                     .nbreaks = 2,
                     .lease_table = 1};
  const ll_lease_plan *p = NULL;
  cJSON *row = NULL;
  CHECK_INT(ll_run_plan(r, &fp, NULL, &err), LL_OK);
  CHECK_INT(ll_lease_table_begin(r, 10, 0, NULL, &p, &err), LL_OK);
  CHECK_INT(ll_lease_table_lifecycle(r, &row, &err), LL_OK);
  cJSON_Delete(row);
  int attempted = 0, failed = 0;
  for (int k = 0; p && k < p->life[0].ncells; k++) {
    const ll_lt_cell *c = &p->cells[p->life[0].first + k];
    row = NULL;
    failed += ll_lease_table_cell(r, c->state, c->op, &row, &err) != LL_OK;
    attempted += c->op == LL_LO_ACQUIRE_NONE && row &&
                 strcmp(ll_json_pstr(row, "verdict"), "NOT_REACHED") != 0;
    cJSON_Delete(row);
  }
  CHECK_INT(attempted, guid ? 1 : 0);
  if (guid) {
    CHECK_INT(failed, 0);
    CHECK(strcmp(w.holder, id) == 0); /* the service's ID was handed out */
  }
  char *text = cJSON_PrintUnformatted(ll_ledger_export_rows(ll_run_ledger(r)));
  CHECK(text && strstr(text, id) == NULL);
  CHECK(text && strstr(text, guid ? "\"x_ms_request_id\":\"X\""
                                  : "{{secret:lease-id}}") != NULL);
  free(text);
  ll_run_close(r);
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < (guid ? 1 : 2); k++) {
    char fp2[128];
    snprintf(fp2, sizeof fp2, "%s/%s", evdir, files[k]);
    FILE *f = fopen(path(fp2), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0;
    while (f && fgets(line, sizeof line, f))
      seen |= strstr(line, id) != NULL;
    if (f)
      fclose(f);
    CHECK_INT(seen, 0);
  }
  fw_cleanup(&w);
}

static void test_service_id_never_exported(void) {
  service_id_case("0b9e5a4c-7d21-4f3e-9a6b-2c8d1e0f4a57", 1, "ev-xid");
  service_id_case("0b9e5a4c-7d21-4f3e-9a6b-2c8d1e0f4a57-and-more", 0,
                  "ev-xlong");
  /* shorter than a GUID and not one: no alias can name it either */
  service_id_case("lease-7f3e9a6b", 0, "ev-xshort");
}

/* A run on w whose first lifecycle has A bound, the container made, and
 * revision 0 written and read back: the start of the cases below. NULL
 * when it could not be opened. */
static ll_run *written_run(fake_wire *w, const char *evdir, const char *file) {
  ll_error err = {0};
  ll_run *r = fw_open(w, path(evdir), file, path("locks"), 0, &err);
  CHECK(r != NULL);
  if (!r)
    return NULL;
  declare(r, 0, "A");
  CHECK_INT(ll_run_bind(r, "A", &err), LL_OK);
  CHECK_INT(
      fw_send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, NULL, &err),
      LL_OK);
  CHECK_INT(ll_run_lifecycle(r, 0, "first", NULL, &err), LL_OK);
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err), LL_OK);
  CHECK_INT(fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err),
            LL_OK);
  return r;
}

/* An acquire answered 201 with another lease ID than the one proposed (a
 * service that does not do what Lease Blob says): that ID is no binding
 * of the run, but it names a lease, so neither ledger carries it, even
 * where the server echoed it in a header the row records, in another
 * case or without hyphens (echo). The row says the IDs differ. A value
 * that is not a GUID is not learnt (as a secret, "1" or "http_status"
 * would be found in every row, which would then be refused): the run goes
 * on recording. */
static void swapped_case(const char *id, const char *echo, int guid,
                         const char *dir) {
  fake_wire w;
  fw_init(&w);
  w.swap_id = id;
  w.echo_id = echo;
  ll_error err = {0};
  char file[64];
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = written_run(&w, dir, file);
  if (!r)
    return;
  cJSON *row = NULL;
  fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row, &err);
  CHECK(row != NULL);
  CHECK(cJSON_IsFalse(
      cJSON_GetObjectItem(row, "returned_lease_matches_proposed")));
  if (guid)
    CHECK_STR(ll_json_str(row, "x_ms_request_id"), "{{secret:lease-id}}");
  else /* not learnt: the service's own value, and the run goes on */
    CHECK_STR(ll_json_str(row, "x_ms_request_id"), id);
  cJSON_Delete(row);
  CHECK_STR(w.holder, id);
  /* the run still records: a read after it */
  CHECK_INT(
      fw_send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, NULL, &err),
      LL_OK);
  ll_run_close(r);
  if (!guid) {
    fw_cleanup(&w);
    return;
  }
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < 2; k++) {
    char fp[128];
    snprintf(fp, sizeof fp, "%s/%s", dir, files[k]);
    FILE *f = fopen(path(fp), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0, rows = 0;
    while (f && fgets(line, sizeof line, f))
      seen |= strstr(line, id) != NULL || (echo && strstr(line, echo)), rows++;
    if (f)
      fclose(f);
    CHECK(rows > 5);
    CHECK_INT(seen, 0);
  }
  fw_cleanup(&w);
}

static void test_swapped_id_never_recorded(void) {
  swapped_case("5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e52", NULL, 1, "ev-swap");
  swapped_case("5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e52",
               "5A0C9E1F3B7D4C2A8E6F1D9B0A7C3E52", 1, "ev-swap-upper");
  swapped_case("5A0C9E1F-3B7D-4C2A-8E6F-1D9B0A7C3E53",
               "5a0c9e1f-3b7d-4c2a-8e6f-1d9b0a7c3e53", 1, "ev-swap-lower");
  swapped_case("1", NULL, 0, "ev-swap-short");
  swapped_case("http_status", NULL, 0, "ev-swap-key");
}

/* A change answered 200 that does not name the proposed ID (another ID,
 * none, or the proposed one beside another): the row says the IDs differ
 * and is an EVIDENCE_ERROR, the new ID is not bound active (the writer
 * keeps sending the ID it had), and no ID the answer carried reaches
 * either ledger. */
static void changed_case(const char *other, const char *dup, const char *dir) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  char file[64];
  snprintf(file, sizeof file, "%s.json", dir);
  ll_run *r = written_run(&w, dir, file);
  if (!r)
    return;
  CHECK_INT(fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err),
            LL_OK);
  char before[64];
  snprintf(before, sizeof before, "%s", w.holder);
  w.change_id = other;
  w.change_dup = dup;
  cJSON *row = NULL;
  fw_send(r, LL_OP_LEASE_CHANGE, "A", "A", 1, -1, &row, &err);
  CHECK(row != NULL);
  CHECK(cJSON_IsFalse(
      cJSON_GetObjectItem(row, "returned_lease_matches_proposed")));
  CHECK_STR(ll_json_str(row, "result_classification"), "EVIDENCE_ERROR");
  cJSON_Delete(row);
  /* no mutation after that doubt */
  int mutations = w.mutations;
  CHECK(fw_send(r, LL_OP_LEASE_RENEW, "A", "A", 1, -1, NULL, &err) != LL_OK);
  CHECK_INT(w.mutations, mutations);
  ll_run_close(r);
  static const char *const files[] = {"export/ledger.jsonl",
                                      "protected/ledger.jsonl"};
  for (int k = 0; k < 2; k++) {
    char fp[128];
    snprintf(fp, sizeof fp, "%s/%s", dir, files[k]);
    FILE *f = fopen(path(fp), "r");
    CHECK(f != NULL);
    char line[65536];
    int seen = 0, rows = 0;
    int active = 0; /* a change's new ID bound active: none */
    while (f && fgets(line, sizeof line, f)) {
      seen |= (other && *other && strstr(line, other)) ||
              (dup && strstr(line, dup));
      active += strstr(line, "\"record\":\"lease_bind\"") &&
                strstr(line, "\"state\":\"active\"");
      rows++;
    }
    if (f)
      fclose(f);
    CHECK(rows > 5);
    CHECK_INT(seen, 0);
    if (k == 1)
      CHECK_INT(active, 0);
  }
  fw_cleanup(&w);
}

static void test_changed_id_checked(void) {
  changed_case("6b1d0f2a-4c8e-4d3b-9f70-2eac1b8d4f63", NULL, "ev-chg-other");
  changed_case("", NULL, "ev-chg-none");
  changed_case(NULL, "6b1d0f2a-4c8e-4d3b-9f70-2eac1b8d4f64", "ev-chg-dup");
}

/* Drops the last line of a file (a process killed before it wrote it). */
static void drop_last_line(const char *file) {
  FILE *f = fopen(file, "r");
  CHECK(f != NULL);
  if (!f)
    return;
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  while (n > 0 && buf[n - 1] == '\n')
    n--;
  while (n > 0 && buf[n - 1] != '\n')
    n--;
  f = fopen(file, "w");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(buf, 1, n, f) == n);
    fclose(f);
  }
}

/* A break in flight when the process died: its intent records no period,
 * so the outcome recovery writes for it says none (null), never 0. */
static void test_recovered_break(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = written_run(&w, "ev-rbreak", "rbreak.json");
  if (!r)
    return;
  CHECK_INT(fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err),
            LL_OK);
  CHECK_INT(fw_send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1, NULL, &err),
            LL_OK);
  ll_run_close(r);
  drop_last_line(path("ev-rbreak/protected/ledger.jsonl"));
  drop_last_line(path("ev-rbreak/export/ledger.jsonl"));
  r = fw_open(&w, path("ev-rbreak"), "rbreak.json", path("locks"), 1, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "recover: %s\n", err.message);
    fw_cleanup(&w);
    return;
  }
  const cJSON *row, *found = NULL;
  cJSON_ArrayForEach(row, ll_ledger_export_rows(ll_run_ledger(r))) {
    if (ll_json_is(row, "record", "outcome") &&
        ll_json_is(row, "operation", "Lease Break"))
      found = row;
  }
  CHECK(found != NULL);
  CHECK_STR(ll_json_str(found, "outcome"), "UNKNOWN");
  CHECK(cJSON_IsNull(cJSON_GetObjectItem(found, "break_period")));
  ll_run_close(r);
  fw_cleanup(&w);
}

int main(void) {
  test_lifecycle_cases();
  test_carry_over();
  test_absent_read_rows();
  root = ll_test_tmpdir();
  if (root) {
    test_run_lifecycles();
    test_finish_seals();
    test_service_id_never_exported();
    test_swapped_id_never_recorded();
    test_changed_id_checked();
    test_recovered_break();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", root);
    free(root);
  }
  return ll_test_report("test_lifecycle");
}
