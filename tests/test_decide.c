/* The decision fold (DESIGN.md section 5) over synthetic ledger rows:
 * ACCEPT, WAIT and the breaking-window finding, the main chain row by row
 * against the documented baseline (section 4), and verify: every filled
 * row re-derives with fill=0, and an altered derived field is LL_E_TAMPER
 * naming it. HOLD, RECONCILE and recovery are in test_decide_hold.c. */
#include <stdlib.h>
#include <string.h>

#include "ll_rows.h"
#include "ll_scenario.h"
#include "model.h"
#include "testlib.h"

static const scenario scenarios[] = {
    /* ---- ACCEPT ------------------------------------------------------- */
    {"accept: azure, version echoed",
     &LL_AZURE,
     {CHAIN_FULL},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"accept: azure, then cleanup (release B, available, delete)",
     &LL_AZURE,
     {CHAIN_FULL, RELEASE("B", 200), PROPS("available", "unlocked"),
      DELETE(NULL, 202)},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"accept: emulator, Azurite 2026-06-06 explained",
     &LL_AZURITE,
     {CHAIN_FULL},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"accept: emulator, Azurite's own codes (409 LeaseAlreadyPresent)",
     &LL_AZURITE,
     {CHAIN_SETUP, CHAIN_BREAK, CHAIN_PROBE, PROPS("breaking", "locked"),
      ACQM("B", 409, "LeaseAlreadyPresent", 0), CHAIN_BROKEN, CHAIN_STALE,
      CHAIN_B, CHAIN_END},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     "result_classification",
     "EXPECTED_REJECTION",
     "returned (none)"},
    {"accept: replay of an emulator fixture",
     &REPLAY_EMU,
     {CHAIN_FULL},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"accept: unlocked-gap control in a destructive lifecycle",
     &LL_AZURE,
     {LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),
      PUT("A", 101, 201, NULL), READ(101), BREAK(30),
      PROPS("breaking", "locked"), CHAIN_BROKEN, PUTM(NULL, 102, 201, NULL, 0),
      READ(102), DELETE(NULL, 202)},
     "ACCEPT",
     NULL,
     "NOT_ATTEMPTED",
     "result_classification",
     "ACCEPTED_WRITE",
     ""},
    {"hold: gap write not read back",
     &LL_AZURE,
     {LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),
      PUT("A", 101, 201, NULL), READ(101), BREAK(30),
      PROPS("breaking", "locked"), CHAIN_BROKEN, PUT(NULL, 102, 201, NULL)},
     "HOLD",
     "ownership not proven: no read-back of the gap write",
     "NOT_ATTEMPTED",
     NOMARK},
    {"hold: gap write refused while still leased is not a gap write",
     &LL_AZURE,
     {LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),
      PUT("A", 101, 201, NULL), READ(101),
      PUT(NULL, 102, 412, "LeaseIdMissing"), READ(101)},
     "HOLD",
     "no unconditioned write accepted in the gap",
     "NOT_ATTEMPTED",
     NOMARK},
    /* ---- WAIT --------------------------------------------------------- */
    {"wait: break accepted, fresh read breaking/locked",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked")},
     "WAIT",
     "breaking/locked; the flow needs broken",
     "NOT_ATTEMPTED",
     NOMARK},
    {"wait: after the probe and B's early 409",
     &LL_AZURE,
     {CHAIN_TO_BROKEN},
     "WAIT",
     "breaking/locked",
     "REPRODUCED",
     NOMARK},
    /* ---- the breaking-window finding ---------------------------------- */
    {"window: after-read already broken",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"),
      PUT("A", 3, 201, NULL), PROPS("broken", "unlocked"), WINDOWM, READ(3),
      CHAIN_STALE, CHAIN_B, CHAIN_END},
     "ACCEPT",
     NULL,
     "INCONCLUSIVE_WINDOW",
     "result",
     "INCONCLUSIVE_WINDOW",
     NULL},
    {"window: brackets breaking but the read-back is not revision 3",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"),
      PUT("A", 3, 201, NULL), PROPS("breaking", "locked"), WINDOWM, READ(1)},
     "RECONCILE",
     "content is revision 1, the accepted-write ledger says 3",
     "INCONCLUSIVE_WINDOW",
     "result",
     "REPRODUCED",
     NULL},
    {"window: brackets breaking, read-back still to come",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"),
      PUT("A", 3, 201, NULL), PROPS("breaking", "locked"), WINDOW},
     "WAIT",
     "breaking/locked",
     "INCONCLUSIVE_WINDOW",
     NOMARK},
    {"window: a late probe proves nothing and claims nothing",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("broken", "unlocked"), LATEM, CHAIN_STALE,
      CHAIN_B, CHAIN_END},
     "HOLD",
     "no fresh breaking observation",
     "INCONCLUSIVE_WINDOW",
     "result",
     "INCONCLUSIVE_WINDOW",
     NULL},
    {"window: inconclusive lifecycle finished, reproduced on a fresh one",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"),
      PUT("A", 3, 201, NULL), PROPS("broken", "unlocked"), WINDOW, READ(3),
      PROPS("broken", "unlocked"), DELETE(NULL, 202), CHAIN_FULL},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"window: A's write rejected while breaking contradicts the baseline",
     &LL_AZURE,
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"),
      PUT("A", 3, 412, "LeaseLost"), PROPS("breaking", "locked"), WINDOWM},
     "HOLD",
     "unexplained discrepancy: documented 201, observed 412 LeaseLost",
     "NOT_ATTEMPTED",
     "result",
     "CONTRADICTED",
     NULL},
};

/* Azure rows of the main chain carry no discrepancy, and the classes and
 * expectations follow DESIGN.md section 4 row by row. */
static void test_main_chain_rows(void) {
  static const ll_step steps[] = {CHAIN_FULL, {S_END, NULL, 0, 0, NULL, 0, 0}};
  static const struct {
    const char *step, *cls, *expect;
  } want[] = {
      {"Put Blob", "ACCEPTED_WRITE", "201"},
      {"Get Blob", "STATE_OBSERVED", "200"},
      {"Lease Acquire", "ACCEPTED_WRITE", "201"},
      {"Put Blob", "ACCEPTED_WRITE", "201"},
      {"Get Blob", "STATE_OBSERVED", "200"},
      {"Put Blob", "EXPECTED_REJECTION", "412 blob-operation lease family"},
      {"Get Blob", "STATE_OBSERVED", "200"},
      {"Get Blob Properties", "STATE_OBSERVED", "200"},
      {"Lease Break", "BREAK_ACCEPTED_NOT_COMPLETE", "202"},
      {"Get Blob Properties", "STATE_OBSERVED", "200"},
      {"Put Blob", "ACCEPTED_WRITE", "201"},
      {"Get Blob Properties", "STATE_OBSERVED", "200"},
      {"Get Blob", "STATE_OBSERVED", "200"},
      {"Get Blob Properties", "STATE_OBSERVED", "200"},
      {"Lease Acquire", "EXPECTED_REJECTION", "409 lease-operation family"},
      {"Get Blob Properties", "STATE_OBSERVED", "200"},
      {"Put Blob", "EXPECTED_REJECTION", "412 blob-operation lease family"},
      {"Lease Acquire", "ACCEPTED_WRITE", "201"},
      {"Put Blob", "ACCEPTED_WRITE", "201"},
      {"Get Blob", "STATE_OBSERVED", "200"},
      {"Put Blob", "EXPECTED_REJECTION", "412 blob-operation lease family"},
      {"Get Blob", "STATE_OBSERVED", "200"},
  };
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 0);
  size_t k = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, b.rows) {
    const char *rec = rb_str(row, "record");
    if (!rec || strcmp(rec, "outcome") != 0)
      continue;
    if (k >= sizeof want / sizeof want[0]) {
      CHECK(0);
      break;
    }
    CHECK_STR(rb_str(row, "operation"), want[k].step);
    CHECK_STR(rb_str(row, "result_classification"), want[k].cls);
    CHECK_STR(rb_str(row, "expectation"), want[k].expect);
    CHECK_INT(cJSON_GetArraySize(
                  cJSON_GetObjectItemCaseSensitive(row, "discrepancy")),
              0);
    k++;
  }
  CHECK_INT(k, sizeof want / sizeof want[0]);
  /* state before each request comes from the last fresh observation */
  CHECK_STR(ll_model_observed_state(b.m), "broken");
  CHECK_INT(ll_model_phase(b.m), LL_PH_LEASED);
  CHECK_STR(ll_model_holder(b.m), "B");
  CHECK_INT(ll_model_last_accepted(b.m), 5);
  CHECK_INT(ll_model_unreconciled(b.m), -1);
  CHECK_INT(ll_model_doubts(b.m), 0);
  CHECK_INT(ll_model_probe_done(b.m), 1);
  CHECK_INT(ll_model_break_sent(b.m), 30);
  CHECK_INT(cJSON_GetArraySize(ll_model_open_intents(b.m)), 0);
  rb_free(&b);
}

/* The nth row (0-based) with this record type and, if given, operation. */
static cJSON *find_row(cJSON *rows, const char *rec, const char *op, int nth) {
  cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *r = rb_str(row, "record"), *o = rb_str(row, "operation");
    if (r && strcmp(r, rec) == 0 && (!op || (o && strcmp(o, op) == 0)) &&
        nth-- == 0)
      return row;
  }
  return NULL;
}

typedef struct {
  const char *rec, *op;
  int nth;
  const char *key; /* field replaced (or removed when value is NULL) */
  const char *value;
  int as_number;
  const char *named; /* the field the refusal must name */
} tamper;

static const tamper tampers[] = {
    {"outcome", "Put Blob", 2, "result_classification", "ACCEPTED_WRITE", 0,
     "recorded result_classification differs"},
    {"outcome", "Put Blob", 2, "result_classification", NULL, 0,
     "recorded result_classification differs"},
    {"outcome", "Put Blob", 2, "http_status", "201", 1, "recorded discrepancy"},
    {"outcome", "Lease Break", 0, "expectation", "409 lease-operation family",
     0, "recorded expectation differs"},
    {"outcome", "Get Blob", 3, "content_revision", "4", 1,
     "recorded content_revision differs"},
    {"outcome", "Lease Acquire", 2, "lease_state_before", "breaking", 0,
     "recorded lease_state_before differs"},
    {"outcome", "Lease Acquire", 2, "lease_before_source", "e0001", 0,
     "recorded lease_before_source differs"},
    {"finding", NULL, 0, "result", "INCONCLUSIVE_WINDOW", 0,
     "recorded result differs"},
    {"decision", NULL, 0, "decision", "HOLD", 0, "recorded decision differs"},
    {"decision", NULL, 0, "window_finding", "NOT_ATTEMPTED", 0,
     "recorded window_finding differs"},
    {"decision", NULL, 0, "statement", "ACCEPT", 0,
     "recorded statement differs"},
};

static void test_verify_tamper(void) {
  static const ll_step steps[] = {
      CHAIN_FULL, DECIDE, {S_END, NULL, 0, 0, NULL, 0, 0}};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 0);
  ll_error err = {0};
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  for (size_t i = 0; i < sizeof tampers / sizeof tampers[0]; i++) {
    const tamper *t = &tampers[i];
    cJSON *rows = cJSON_Duplicate(b.rows, 1);
    cJSON *row = find_row(rows, t->rec, t->op, t->nth);
    CHECK(row != NULL);
    if (!row) {
      cJSON_Delete(rows);
      continue;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(row, t->key);
    if (t->value && t->as_number)
      cJSON_AddNumberToObject(row, t->key, atof(t->value));
    else if (t->value)
      cJSON_AddStringToObject(row, t->key, t->value);
    memset(&err, 0, sizeof err);
    CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
    CHECK_INT(err.code, LL_E_TAMPER);
    if (!strstr(err.message, t->named)) {
      CHECK(0);
      fprintf(stderr, "  tamper %zu: \"%s\" does not name \"%s\"\n", i,
              err.message, t->named);
    }
    cJSON_Delete(rows);
  }
  /* the decision row's reasons are re-derived too */
  cJSON *rows = cJSON_Duplicate(b.rows, 1);
  cJSON *dec = find_row(rows, "decision", NULL, 0);
  cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(dec, "reasons"),
                       cJSON_CreateString("added"));
  CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "recorded reasons differs") != NULL);
  cJSON_Delete(rows);
  rb_free(&b);

  /* an explained deviation cannot be re-labelled */
  static const ll_step emu[] = {CHAIN_FULL, {S_END, NULL, 0, 0, NULL, 0, 0}};
  rb_init(&b, &LL_AZURITE, 1);
  rb_run(&b, emu);
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  rows = cJSON_Duplicate(b.rows, 1);
  cJSON *put = find_row(rows, "outcome", "Put Blob", 1);
  cJSON *item = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(put, "discrepancy"), 0);
  CHECK_STR(rb_str(item, "explained_by"), "azurite-3.37-version-2026-06-06");
  cJSON_ReplaceItemInObjectCaseSensitive(
      item, "explained_by", cJSON_CreateString("reviewer-said-so"));
  CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "recorded discrepancy differs") != NULL);
  cJSON_Delete(rows);
  rb_free(&b);
}

/* A reconcile row's result is re-derived from the reads before it. */
static void test_verify_reconcile(void) {
  static const ll_step steps[] = {CHAIN_TO_BROKEN,
                                  CHAIN_BROKEN,
                                  CHAIN_STALE,
                                  ACQ("B", 201, NULL),
                                  PUTF("B", 5, 0, NULL, F_UNKNOWN),
                                  PROPS("leased", "locked"),
                                  READ(5),
                                  RECON,
                                  CHAIN_END,
                                  DECIDE,
                                  {S_END, NULL, 0, 0, NULL, 0, 0}};
  ll_rb b;
  ll_error err = {0};
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 0);
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  cJSON *rows = cJSON_Duplicate(b.rows, 1);
  cJSON *rec = find_row(rows, "reconcile", NULL, 0);
  CHECK_STR(rb_str(rec, "result"), "DOUBTFUL_WRITE_COMMITTED");
  CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rec, "doubts")),
            1);
  cJSON_ReplaceItemInObjectCaseSensitive(
      rec, "result", cJSON_CreateString("DOUBTFUL_WRITE_NOT_PRESENT"));
  CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "recorded result differs") != NULL);
  cJSON_Delete(rows);
  /* dropping the reconcile row leaves the doubt open: HOLD, re-derived */
  rows = cJSON_Duplicate(b.rows, 1);
  int n = 0;
  cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    if (row == find_row(rows, "reconcile", NULL, 0))
      break;
    n++;
  }
  cJSON_DeleteItemFromArray(rows, n);
  CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
  cJSON_Delete(rows);
  rb_free(&b);
}

/* Rows the fold refuses outright. */
static void test_apply_refusals(void) {
  ll_rb b;
  ll_error err = {0};
  rb_init(&b, &LL_AZURE, 0);
  cJSON *row = cJSON_Parse("{\"record\":\"declare\",\"revision\":1}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_E_MANIFEST);
  CHECK(strstr(err.message, "before the run manifest") != NULL);
  cJSON_Delete(row);
  rb_free(&b);

  rb_init(&b, &LL_AZURE, 1);
  row = cJSON_Parse("{\"seq\":40}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "no record type") != NULL);
  cJSON_Delete(row);
  row = cJSON_Parse("{\"record\":\"outcome\",\"operation\":\"Put Block\"}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_E_TAMPER);
  CHECK(strstr(err.message, "unknown operation") != NULL);
  cJSON_Delete(row);
  /* an intent stays open until its outcome arrives (recovery reads it) */
  row = cJSON_Parse("{\"record\":\"intent\",\"event_id\":\"e0099\","
                    "\"operation\":\"Put Blob\"}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_OK);
  cJSON_Delete(row);
  CHECK(cJSON_GetObjectItemCaseSensitive(ll_model_open_intents(b.m), "e0099") !=
        NULL);
  row = cJSON_Parse("{\"record\":\"outcome\",\"event_id\":\"e0099\","
                    "\"operation\":\"Get Blob\",\"outcome\":"
                    "\"RESPONSE\",\"http_status\":404,"
                    "\"emitted_requests\":1}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_OK);
  CHECK_INT(cJSON_GetArraySize(ll_model_open_intents(b.m)), 0);
  CHECK_STR(rb_str(row, "result_classification"), "EVIDENCE_ERROR");
  cJSON_Delete(row);
  /* note, refusal and recovery rows change nothing */
  row = cJSON_Parse("{\"record\":\"refusal\",\"code\":\"LL_E_HOLD\"}");
  CHECK_INT(ll_model_apply(b.m, row, 1, &err), LL_OK);
  cJSON_Delete(row);
  CHECK_INT(ll_model_doubts(b.m), 0);
  CHECK_INT(ll_model_phase(b.m), LL_PH_NONE);
  rb_free(&b);
}

/* ACCEPT out of reach: after broken without breaking, or after a reason no
 * later step removes; still in reach while breaking or once the chain is
 * on track, and in a destructive lifecycle whatever it observed. */
static void test_accept_reachable(void) {
  static const struct {
    const char *name;
    ll_step steps[40];
    int reachable;
    const char *why; /* substring; NULL when reachable */
  } rows[] = {
      {"before the break", {CHAIN_SETUP, CHAIN_BREAK}, 1, NULL},
      {"breaking seen, then broken", {CHAIN_TO_BROKEN, CHAIN_BROKEN}, 1, NULL},
      {"late probe: broken without breaking",
       {CHAIN_SETUP, CHAIN_BREAK, PROPS("broken", "unlocked"), LATE},
       0,
       "left breaking without a fresh breaking observation"},
      {"an unexplained version discrepancy stands for the run",
       {CHAIN_SETUP, PROPSM("leased", "locked", F_VER_NEW), BREAK(30),
        CHAIN_PROBE},
       0,
       "returned 2026-06-06"},
      {"a rejected revision found (RECONCILE)",
       {AFTER_BROKEN, CHAIN_B,
        PUT("A", 6, 412, "LeaseIdMismatchWithBlobOperation"), READ(6)},
       0,
       "rejected revision 6"},
      {"the gap control: broken without breaking is its chain",
       {LIFE(1), PUT(NULL, 100, 201, NULL), READ(100), ACQ("A", 201, NULL),
        PUT("A", 101, 201, NULL), READ(101), BREAK(0),
        PROPS("broken", "unlocked")},
       1,
       NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_rb b;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, rows[i].steps);
    CHECK_INT(b.failed, 0);
    const char *why = NULL;
    int got = ll_decide_accept_reachable(b.m, &why);
    if (got != rows[i].reachable ||
        (rows[i].why && !(why && strstr(why, rows[i].why))))
      fprintf(stderr, "accept_reachable: %s: %d, %s\n", rows[i].name, got,
              why ? why : "(no reason)");
    CHECK_INT(got, rows[i].reachable);
    if (rows[i].why)
      CHECK(why && strstr(why, rows[i].why));
    else
      CHECK(why == NULL);
    rb_free(&b);
  }
}

int main(void) {
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
    run_scenario(&scenarios[i]);
  test_main_chain_rows();
  test_verify_tamper();
  test_verify_reconcile();
  test_apply_refusals();
  test_accept_reachable();
  return ll_test_report("test_decide");
}
