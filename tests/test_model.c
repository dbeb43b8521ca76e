/* The fold (core/judgement/model.c, model_query.c) over hand-built rows
 * (tests/ll_rows.h): the state each prefix of the seed's chain leaves, the
 * sentinels, the doubts and the reconcile results that settle them
 * (ll_model_reconcile_settles, the one copy of that rule), open intents,
 * the stop row, and verify's re-derivation (fill=0) catching an altered
 * derived field. The decision itself is test_decide*.c's; the lease
 * table's cell rows are test_model_cell.c's. */
#include <stdlib.h>
#include <string.h>

#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END                                                                    \
  { S_END, NULL, 0, 0, NULL, 0, 0 }
#define SETUP LIFE(0), PUT(NULL, 0, 201, NULL), READ(0)

static void test_manifest_first(void) {
  ll_model *m = ll_model_new();
  cJSON *row = cJSON_CreateObject();
  cJSON_AddStringToObject(row, "record", "lifecycle");
  ll_error err = {0};
  CHECK_INT(ll_model_apply(m, row, 1, &err), LL_E_MANIFEST);
  CHECK(strstr(err.message, "invariant 11") != NULL);
  CHECK_INT(ll_model_has_manifest(m), 0);
  cJSON_Delete(row);
  row = cJSON_CreateObject(); /* no record type at all */
  CHECK_INT(ll_model_apply(m, row, 1, &err), LL_E_TAMPER);
  cJSON_Delete(row);
  ll_model_free(m);
}

/* A record type no writer makes is tampering, not a row to skip: renamed,
 * an outcome would vanish from the fold while its line stays chained. The
 * types that change no state are still taken. */
static void test_unknown_record(void) {
  static const ll_step steps[] = {SETUP, END};
  static const char *const quiet[] = {"lease_bind", "refusal", "note"};
  for (int i = 0; i < 4; i++) {
    ll_rb b;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, steps);
    CHECK_INT(b.failed, 0);
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "record", i < 3 ? quiet[i] : "outcome_");
    cJSON_AddNumberToObject(row, "seq", (double)++b.seq);
    ll_error err = {0};
    CHECK_INT(ll_model_apply(b.m, row, 1, &err), i < 3 ? LL_OK : LL_E_TAMPER);
    if (i == 3)
      CHECK(strstr(err.message, "unknown record type outcome_") != NULL);
    cJSON_Delete(row);
    rb_free(&b);
  }
}

static void test_fresh(void) {
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  const ll_model *m = b.m;
  CHECK_INT(b.failed, 0);
  CHECK_INT(ll_model_has_manifest(m), 1);
  CHECK_STR(ll_model_endpoint_kind(m), "azure");
  CHECK_STR(ll_model_api_version(m), "2023-11-03");
  CHECK_INT(ll_model_epoch(m), 0);
  CHECK_INT(ll_model_phase(m), LL_PH_NONE);
  CHECK_INT(ll_model_doubts(m), 0);
  CHECK(ll_model_doubt_event(m, 0) == NULL);
  CHECK_INT(ll_model_unreconciled(m), LL_REV_NONE);
  CHECK_INT(ll_model_last_accepted(m), LL_REV_NONE);
  CHECK_INT(ll_model_break_sent(m), LL_BREAK_NONE);
  CHECK_INT(ll_model_reconciled(m), 0);
  CHECK_INT(ll_model_probe_done(m), 0);
  CHECK_INT(ll_model_run_leased(m), 0);
  CHECK_INT(ll_model_first_write_pending(m), 1);
  CHECK_STR(ll_model_observed_state(m), "");
  CHECK(ll_model_stopped(m) == NULL);
  CHECK(ll_model_hold_reason(m) == NULL);
  CHECK_INT(ll_model_actor_permitted(m, "B"), 1);
  CHECK_INT(ll_model_actor_permitted(m, "C"), 0);
  CHECK_INT(ll_model_actor_permitted(m, NULL), 0);
  char sha[LL_SHA256_HEX];
  rb_sha(5, sha);
  CHECK_STR(ll_model_declared(m, 5, "B"), sha);
  CHECK_STR(ll_model_declared(m, 5, NULL), sha);
  CHECK(ll_model_declared(m, 5, "A") == NULL); /* revision 5 is B's */
  CHECK(ll_model_declared(m, 7, NULL) == NULL);
  rb_free(&b);
}

/* The state after each prefix of the seed's main chain. */
typedef struct {
  const char *name;
  ll_step steps[40];
  long epoch;
  ll_phase phase;
  const char *holder;
  long unreconciled, last_accepted, break_period;
  const char *obs_state;
  int probe_done, run_leased, mutations;
} prefix;

static const prefix prefixes[] = {
    {"a lifecycle opens",
     {LIFE(0), END},
     1,
     LL_PH_NONE,
     "",
     LL_REV_NONE,
     LL_REV_NONE,
     LL_BREAK_NONE,
     "",
     0,
     0,
     0},
    {"the first write is owed its read-back",
     {LIFE(0), PUT(NULL, 0, 201, NULL), END},
     1,
     LL_PH_NONE,
     "",
     0,
     0,
     LL_BREAK_NONE,
     "",
     0,
     0,
     1},
    {"the read-back settles it",
     {SETUP, END},
     1,
     LL_PH_NONE,
     "",
     LL_REV_NONE,
     0,
     LL_BREAK_NONE,
     "",
     0,
     0,
     1},
    {"A acquires",
     {SETUP, ACQ("A", 201, NULL), END},
     1,
     LL_PH_LEASED,
     "A",
     LL_REV_NONE,
     0,
     LL_BREAK_NONE,
     "",
     0,
     1,
     2},
    {"a rejected write changes no revision",
     {CHAIN_SETUP, END},
     1,
     LL_PH_LEASED,
     "A",
     LL_REV_NONE,
     1,
     LL_BREAK_NONE,
     "",
     0,
     1,
     4},
    {"the break is sent",
     {CHAIN_SETUP, CHAIN_BREAK, END},
     1,
     LL_PH_BREAK_SENT,
     "A",
     LL_REV_NONE,
     1,
     30,
     "leased",
     0,
     1,
     5},
    {"breaking observed",
     {CHAIN_SETUP, CHAIN_BREAK, PROPS("breaking", "locked"), END},
     1,
     LL_PH_BREAKING,
     "A",
     LL_REV_NONE,
     1,
     30,
     "breaking",
     0,
     1,
     5},
    {"the probe wrote revision 3 and read it back",
     {CHAIN_TO_BROKEN, END},
     1,
     LL_PH_BREAKING,
     "A",
     LL_REV_NONE,
     3,
     30,
     "breaking",
     1,
     1,
     7},
    {"broken observed",
     {CHAIN_TO_BROKEN, CHAIN_BROKEN, END},
     1,
     LL_PH_BROKEN,
     "A",
     LL_REV_NONE,
     3,
     30,
     "broken",
     1,
     1,
     7},
    {"B holds the lease and revision 5 is final",
     {CHAIN_FULL, END},
     1,
     LL_PH_LEASED,
     "B",
     LL_REV_NONE,
     5,
     30,
     "broken",
     1,
     1,
     11},
    {"a second lifecycle after a confirmed delete",
     {SETUP,
      DELETE(NULL, 202),
      {S_READ, NULL, 0, 404, "BlobNotFound", 0, 0},
      LIFE(0),
      END},
     2,
     LL_PH_NONE,
     "",
     LL_REV_NONE,
     LL_REV_NONE,
     LL_BREAK_NONE,
     "",
     0,
     1,
     0},
};

/* The poller's hint as it was read from the rows before the fold kept it:
 * backwards from the last row to the last lifecycle row, the first outcome
 * of a Lease Break classified BREAK_ACCEPTED_NOT_COMPLETE. */
static int scan_hint(const cJSON *rows, double *end_ns, long *hint_s) {
  for (const cJSON *row = rows && rows->child ? rows->child->prev : NULL; row;
       row = row == rows->child ? NULL : row->prev) {
    const char *rec = rb_str(row, "record"), *op = rb_str(row, "operation");
    const char *cls = rb_str(row, "result_classification");
    if (rec && strcmp(rec, "lifecycle") == 0)
      return 0;
    if (rec && strcmp(rec, "outcome") == 0 && op &&
        strcmp(op, "Lease Break") == 0 && cls &&
        strcmp(cls, "BREAK_ACCEPTED_NOT_COMPLETE") == 0) {
      const char *lt = rb_str(row, "x_ms_lease_time");
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "mono_end_ns");
      *end_ns = cJSON_IsNumber(t) ? t->valuedouble : 0;
      *hint_s = lt ? atol(lt) : -1;
      return lt != NULL;
    }
  }
  return 0;
}

/* The fold's hint is the one the rows give. */
static void check_hint_parity(const ll_rb *b) {
  double fe = -1, se = -1;
  long fh = -2, sh = -2;
  CHECK_INT(ll_model_break_hint(b->m, &fe, &fh), scan_hint(b->rows, &se, &sh));
  CHECK(fe == se);
  CHECK_INT(fh, sh);
}

static void test_prefixes(void) {
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    const prefix *p = &prefixes[i];
    ll_rb b;
    int before = ll_test_fail;
    rb_init(&b, &LL_AZURE, 1);
    rb_run(&b, p->steps);
    CHECK_INT(b.failed, 0);
    CHECK_INT(ll_model_epoch(b.m), p->epoch);
    CHECK_STR(ll_phase_name(ll_model_phase(b.m)), ll_phase_name(p->phase));
    CHECK_STR(ll_model_holder(b.m), p->holder);
    CHECK_INT(ll_model_unreconciled(b.m), p->unreconciled);
    CHECK_INT(ll_model_last_accepted(b.m), p->last_accepted);
    CHECK_INT(ll_model_break_sent(b.m), p->break_period);
    CHECK_STR(ll_model_observed_state(b.m), p->obs_state);
    CHECK_INT(ll_model_probe_done(b.m), p->probe_done);
    CHECK_INT(ll_model_run_leased(b.m), p->run_leased);
    CHECK_INT(ll_model_lifecycle_mutations(b.m), p->mutations);
    CHECK_INT(ll_model_doubts(b.m), 0);
    check_hint_parity(&b);
    ll_error err = {0};
    CHECK_INT(rb_verify(b.rows, &err), LL_OK);
    if (ll_test_fail != before)
      fprintf(stderr, "  in prefix: %s\n", p->name);
    rb_free(&b);
  }
}

/* The one copy of the rule: which reconcile results settle a doubt. */
static void test_settles(void) {
  static const struct {
    const char *result;
    int settles;
  } t[] = {
      {"MATCH", 1},
      {"DOUBTFUL_WRITE_COMMITTED", 1},
      {"DOUBTFUL_WRITE_NOT_PRESENT", 1},
      {"INCOMPLETE", 0},
      {"MISMATCH", 0},
      {"REJECTED_REVISION_FOUND", 0},
      {"match", 0},
      {"", 0},
      {NULL, 0},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    CHECK_INT(ll_model_reconcile_settles(t[i].result), t[i].settles);
}

/* A doubt, then a reconcile: its result, whether it settled the doubt, and
 * what the fold then holds. */
typedef struct {
  const char *name;
  ll_step steps[24];
  const char *result;
  int reconciled;
  int doubts_after;
  long last_accepted;
} recon;

#define DOUBT_PUT PUTF(NULL, 1, 0, NULL, F_UNKNOWN)

static const recon recons[] = {
    {"the doubtful write is there",
     {SETUP, DOUBT_PUT, PROPS("available", "unlocked"), READ(1), RECONM, END},
     "DOUBTFUL_WRITE_COMMITTED",
     1,
     0,
     1},
    {"the doubtful write is not there",
     {SETUP, DOUBT_PUT, PROPS("available", "unlocked"), READ(0), RECONM, END},
     "DOUBTFUL_WRITE_NOT_PRESENT",
     1,
     0,
     0},
    {"no doubt, the content matches",
     {SETUP, PROPS("available", "unlocked"), READ(0), RECONM, END},
     "MATCH",
     1,
     0,
     0},
    {"bytes nobody declared",
     {SETUP, DOUBT_PUT, PROPS("available", "unlocked"), READF(0, F_GARBAGE),
      RECONM, END},
     "MISMATCH",
     0,
     1,
     0},
    {"a rejected revision found",
     {SETUP, ACQ("A", 201, NULL), PUT(NULL, 2, 412, "LeaseIdMissing"),
      PUTF("A", 1, 0, NULL, F_UNKNOWN), PROPS("leased", "locked"), READ(2),
      RECONM, END},
     "REJECTED_REVISION_FOUND",
     0,
     1,
     0},
    {"no properties read since the lifecycle began",
     {SETUP, DOUBT_PUT, READ(1), RECONM, END},
     "INCOMPLETE",
     0,
     1,
     0},
};

static void test_reconcile(void) {
  for (size_t i = 0; i < sizeof recons / sizeof recons[0]; i++) {
    const recon *c = &recons[i];
    ll_rb b;
    int before = ll_test_fail;
    rb_init(&b, &LL_AZURE, 1);
    const cJSON *row = rb_run(&b, c->steps);
    CHECK_INT(b.failed, 0);
    CHECK_STR(rb_str(row, "result"), c->result);
    CHECK_INT(ll_model_reconcile_settles(rb_str(row, "result")), c->reconciled);
    CHECK_INT(ll_model_reconciled(b.m), c->reconciled);
    CHECK_INT(ll_model_doubts(b.m), c->doubts_after);
    CHECK_INT(ll_model_last_accepted(b.m), c->last_accepted);
    if (c->doubts_after > 0)
      CHECK(ll_model_doubt_event(b.m, 0) != NULL);
    ll_error err = {0};
    CHECK_INT(rb_verify(b.rows, &err), LL_OK);
    if (ll_test_fail != before)
      fprintf(stderr, "  in reconcile: %s\n", c->name);
    rb_free(&b);
  }
}

/* The doubt names its event; a lost read is a doubt too; a new lifecycle
 * does not reset a reconcile's answer to "settled" for the next one. */
static void test_doubts(void) {
  static const ll_step steps[] = {SETUP, DOUBT_PUT, END};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(ll_model_doubts(b.m), 1);
  CHECK_STR(ll_model_doubt_event(b.m, 0), rb_back(&b, 1));
  CHECK(ll_model_doubt_event(b.m, 1) == NULL);
  CHECK(ll_model_doubt_event(b.m, -1) == NULL);
  CHECK_INT(ll_model_first_write_pending(b.m), 0);
  rb_free(&b);
  static const ll_step lost_read[] = {SETUP, READF(0, F_UNKNOWN), END};
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, lost_read);
  CHECK_INT(ll_model_doubts(b.m), 1);
  rb_free(&b);
  static const ll_step settled_then_new[] = {
      SETUP,
      PROPS("available", "unlocked"),
      READ(0),
      RECON,
      DELETE(NULL, 202),
      {S_READ, NULL, 0, 404, "BlobNotFound", 0, 0},
      LIFE(0),
      END};
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, settled_then_new);
  CHECK_INT(b.failed, 0);
  CHECK_INT(ll_model_epoch(b.m), 2);
  CHECK_INT(ll_model_reconciled(b.m), 0);
  rb_free(&b);
}

/* The poller's hint (ll_model_break_hint): the last break of the lifecycle
 * answered BREAK_ACCEPTED_NOT_COMPLETE, its answer's end and its
 * x-ms-lease-time; a refused break leaves it; a new lifecycle drops it. */
static void test_break_hint(void) {
  static const ll_step brk[] = {
      SETUP, ACQ("A", 201, NULL), {S_BREAK, NULL, 15, 202, NULL, 0, 1}, END};
  static const ll_step refused[] = {
      {S_BREAK, NULL, 30, 409, "LeaseNotPresentWithLeaseOperation", 0, 0}, END};
  static const ll_step life[] = {LIFE(0), END};
  ll_rb b;
  double end = -1;
  long hint = -2;
  rb_init(&b, &LL_AZURE, 1);
  CHECK_INT(ll_model_break_hint(b.m, &end, &hint), 0);
  CHECK(end == -1 && hint == -2); /* untouched */
  const cJSON *row = rb_run(&b, brk);
  CHECK_INT(b.failed, 0);
  CHECK_STR(rb_str(row, "result_classification"),
            "BREAK_ACCEPTED_NOT_COMPLETE");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "mono_end_ns");
  CHECK_INT(ll_model_break_hint(b.m, &end, &hint), 1);
  CHECK_INT(hint, 15);
  CHECK(cJSON_IsNumber(t) && end == t->valuedouble);
  rb_run(&b, refused);
  end = -1;
  hint = -2;
  CHECK_INT(ll_model_break_hint(b.m, &end, &hint), 1);
  CHECK_INT(hint, 15);
  CHECK(cJSON_IsNumber(t) && end == t->valuedouble);
  check_hint_parity(&b);
  rb_run(&b, life);
  end = -1;
  hint = -2;
  CHECK_INT(ll_model_break_hint(b.m, &end, &hint), 0);
  CHECK(end == -1 && hint == -2);
  check_hint_parity(&b);
  rb_free(&b);
  /* a second accepted break is the hint; one whose answer was lost is not */
  static const ll_step two[] = {SETUP,
                                ACQ("A", 201, NULL),
                                BREAK(15),
                                {S_BREAK, NULL, 7, 202, NULL, 0, 1},
                                {S_BREAK, NULL, 9, 202, NULL, F_UNKNOWN, 0},
                                END};
  rb_init(&b, &LL_AZURE, 1);
  row = rb_run(&b, two);
  t = cJSON_GetObjectItemCaseSensitive(row, "mono_end_ns");
  CHECK_INT(ll_model_break_hint(b.m, &end, &hint), 1);
  CHECK_INT(hint, 7);
  CHECK(cJSON_IsNumber(t) && end == t->valuedouble);
  check_hint_parity(&b);
  rb_free(&b);
}

/* An intent with no outcome stays open (recovery reads it); its outcome
 * closes it. A stop row stops the flow; a recovery row reopens it. */
static void test_intents_and_stop(void) {
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "record", "intent");
  cJSON_AddStringToObject(in, "event_id", "e0900");
  cJSON_AddStringToObject(in, "operation", "Put Blob");
  rb_apply(&b, in);
  const cJSON *open = ll_model_open_intents(b.m);
  CHECK(cJSON_GetObjectItemCaseSensitive(open, "e0900") != NULL);
  static const ll_step one[] = {LIFE(0), PUT(NULL, 0, 201, NULL), END};
  rb_run(&b, one);
  CHECK_INT(cJSON_GetArraySize(ll_model_open_intents(b.m)), 1);
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "record", "stop");
  cJSON_AddStringToObject(stop, "kind", "no-decision");
  cJSON_AddStringToObject(stop, "reason", "the script raised");
  rb_apply(&b, stop);
  CHECK_STR(ll_model_stopped(b.m), "no-decision: the script raised");
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddStringToObject(rec, "record", "recovery");
  rb_apply(&b, rec);
  CHECK(ll_model_stopped(b.m) == NULL);
  CHECK_INT(b.failed, 0);
  rb_free(&b);
}

/* Verify re-derives every derived field: an altered one is LL_E_TAMPER
 * naming it, in an outcome, a reconcile and a window finding. */
static void test_tamper(void) {
  static const ll_step steps[] = {CHAIN_SETUP,
                                  CHAIN_BREAK,
                                  PROPS("breaking", "locked"),
                                  PUT("A", 3, 201, NULL),
                                  PROPS("breaking", "locked"),
                                  WINDOWM,
                                  READ(3),
                                  PROPS("breaking", "locked"),
                                  RECON,
                                  END};
  static const struct {
    const char *record;
    const char *field;
    const char *value;
  } t[] = {
      {"outcome", "result_classification", "EXPECTED_REJECTION"},
      {"outcome", "expectation", "409"},
      {"outcome", "lease_state_before", "broken"},
      {"reconcile", "result", "MATCH_NOT"},
      {"finding", "result", "CONTRADICTED"},
  };
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 0);
  CHECK_STR(rb_str(b.mark, "result"), "REPRODUCED");
  ll_error err = {0};
  CHECK_INT(rb_verify(b.rows, &err), LL_OK);
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    cJSON *rows = cJSON_Duplicate(b.rows, 1);
    cJSON *row, *last = NULL;
    cJSON_ArrayForEach(row, rows) {
      if (strcmp(rb_str(row, "record"), t[i].record) == 0 &&
          cJSON_GetObjectItemCaseSensitive(row, t[i].field))
        last = row;
    }
    CHECK(last != NULL);
    if (last)
      cJSON_ReplaceItemInObjectCaseSensitive(last, t[i].field,
                                             cJSON_CreateString(t[i].value));
    memset(&err, 0, sizeof err);
    CHECK_INT(rb_verify(rows, &err), LL_E_TAMPER);
    CHECK(strstr(err.message, t[i].field) != NULL);
    cJSON_Delete(rows);
  }
  rb_free(&b);
}

int main(void) {
  test_manifest_first();
  test_unknown_record();
  test_fresh();
  test_prefixes();
  test_settles();
  test_reconcile();
  test_doubts();
  test_break_hint();
  test_intents_and_stop();
  test_tamper();
  return ll_test_report("test_model");
}
