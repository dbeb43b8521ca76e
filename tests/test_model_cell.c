/* The fold of the lease table's cell rows (core/judgement/model_cell.c)
 * over hand-built rows (tests/ll_rows.h): a cell row's observation is a
 * copy of its attempt's and reads' outcome rows, and a cell attempt
 * outside a lease-table run is tampering. Split from test_model.c. */
#include <string.h>

#include "ll_rows.h"
#include "model.h"
#include "testlib.h"

#define END                                                                    \
  { S_END, NULL, 0, 0, NULL, 0, 0 }

/* A lease-table cell row: RB_CELL, attempted by the READ and observed by
 * the PROPS before it. obs_state, status: what the
 * row claims it observed. */
static cJSON *cell_row(ll_rb *b, long status, const char *obs_state) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "record", "cell");
  cJSON_AddStringToObject(r, "state", "Leased (A)");
  cJSON_AddStringToObject(r, "op", "read, no lease");
  cJSON_AddNumberToObject(r, "lifecycle", (double)b->epoch);
  cJSON_AddNumberToObject(r, "fixture_epoch", (double)b->epoch);
  cJSON_AddStringToObject(r, "attempt_event", rb_back(b, 2));
  cJSON *obs = cJSON_AddArrayToObject(r, "observe_events");
  cJSON_AddItemToArray(obs, cJSON_CreateString(rb_back(b, 1)));
  cJSON_AddArrayToObject(r, "expected");
  cJSON *o = cJSON_AddObjectToObject(r, "observed");
  cJSON_AddNumberToObject(o, "status", (double)status);
  cJSON_AddNullToObject(o, "code");
  cJSON_AddStringToObject(o, "lease_state_after", obs_state);
  cJSON_AddNullToObject(o, "content_revision");
  cJSON_AddNullToObject(r, "server");
  cJSON_AddNullToObject(r, "verdict");
  cJSON_AddNullToObject(r, "reason");
  cJSON_AddNullToObject(r, "known_deviation");
  return r;
}

/* A cell row's observation is a copy of its attempt's and its reads'
 * outcome rows: a row that claims another status or state than they
 * recorded (a re-chained edit hiding or inventing a deviation), or a
 * second row of the same cell (which would stand in for a missing one in
 * the table's count), is tampering, never judged. */
static void test_cell_rows(void) {
  static const ll_step steps[] = {
      LIFE(0),          PUT(NULL, 0, 201, NULL),   READ(0), ACQ("A", 201, NULL),
      READF(0, F_CELL), PROPS("leased", "locked"), END};
  /* the same, but the attempt the row names is no attempt of its cell */
  static const ll_step other[] = {
      LIFE(0), PUT(NULL, 0, 201, NULL),   READ(0), ACQ("A", 201, NULL),
      READ(0), PROPS("leased", "locked"), END};
  /* the same rows, but the cell row claims a later lifecycle than theirs */
  static const ll_step later[] = {
      LIFE(0),          PUT(NULL, 0, 201, NULL),   READ(0), ACQ("A", 201, NULL),
      READF(0, F_CELL), PROPS("leased", "locked"), LIFE(1), END};
  static const struct {
    const ll_step *steps;
    long status;
    const char *state;
    ll_status want;
  } t[] = {{steps, 200, "leased", LL_OK},
           {steps, 412, "leased", LL_E_TAMPER},
           {steps, 200, "broken", LL_E_TAMPER},
           {other, 200, "leased", LL_E_TAMPER},
           {later, 200, "leased", LL_E_TAMPER}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ll_rb b;
    rb_init(&b, &LL_AZURE, 1);
    cJSON *flow = cJSON_CreateObject();
    cJSON_AddStringToObject(flow, "record", "flow");
    cJSON_AddBoolToObject(flow, "lease_table", 1);
    rb_apply(&b, flow);
    rb_run(&b, t[i].steps);
    CHECK_INT(b.failed, 0);
    cJSON *row = cell_row(&b, t[i].status, t[i].state);
    cJSON_AddNumberToObject(row, "seq", (double)++b.seq);
    ll_error err = {0};
    CHECK_INT(ll_model_apply(b.m, row, 1, &err), t[i].want);
    if (t[i].want == LL_OK) {
      CHECK_STR(rb_str(row, "verdict"), "CONFORMS");
      cJSON *again = cell_row(&b, t[i].status, t[i].state);
      cJSON_AddNumberToObject(again, "seq", (double)++b.seq);
      CHECK_INT(ll_model_apply(b.m, again, 1, &err), LL_E_TAMPER);
      CHECK(strstr(err.message, "second") != NULL);
      cJSON_Delete(again);
    }
    cJSON_Delete(row);
    rb_free(&b);
  }
}

/* An outcome row's "cell" makes the baseline leave the answer to the cell
 * row: honoured only in a run whose flow row declared the lease table. In
 * any other run it is an edit that would silence the baseline's
 * discrepancies while the observed status stays as recorded. */
static void test_cell_outside_table(void) {
  static const ll_step steps[] = {LIFE(0), PUT(NULL, 0, 201, NULL),
                                  READF(0, F_CELL), END};
  ll_rb b;
  rb_init(&b, &LL_AZURE, 1);
  rb_run(&b, steps);
  CHECK_INT(b.failed, 1);
  CHECK(strstr(b.err.message, "lease-table") != NULL);
  rb_free(&b);
}

int main(void) {
  test_cell_rows();
  test_cell_outside_table();
  return ll_test_report("test_model_cell");
}
