/* What bounds a run besides its guard, through run.h and ledger.h against
 * the in-process wire of fake_wire.h (invariant 14): the operator's
 * --deadline-s, on the run's clock, before every request and again after
 * the preflight a first mutation waits for; and the bundle's size
 * (LL_RUN_EVIDENCE_MAX), past which only the rows that close the run are
 * written. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_wire.h"
#include "ledger.h"
#include "run.h"
#include "testlib.h"

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

#define LOCKS path("locks")

typedef ll_status (*exchange_fn)(ll_transport *, const ll_http_request *,
                                 ll_http_response *, ll_error *);

/* A run on the fake wire (its exchange, NULL: the plain one) with the
 * given clock and deadline. */
static ll_run *open_run(fake_wire *w, const char *leaf, ll_clock *clock,
                        long deadline_s, exchange_fn exchange, ll_error *err) {
  cJSON *man = fw_manifest();
  ll_transport *t = fw_transport(w);
  if (t && exchange)
    t->exchange = exchange;
  ll_run_config cfg = {.evidence_dir = path(leaf),
                       .manifest = man,
                       .account_url = "http://127.0.0.1:9/devstoreaccount1",
                       .container = "lease-handoff-lab",
                       .blob = leaf,
                       .lua_version = "Lua 5.4.6",
                       .transport = t,
                       .clock = clock,
                       .deadline_s = deadline_s,
                       .lock_dir = LOCKS};
  ll_run *r = ll_run_open(&cfg, err);
  cJSON_Delete(man);
  if (!r)
    fprintf(stderr, "open %s: %s\n", leaf, err->message);
  return r;
}

static ll_status send(ll_run *r, ll_op op, const char *actor, cJSON **row) {
  ll_error err = {0};
  *row = NULL;
  return fw_send(r, op, actor, NULL, 0, -1, row, &err);
}

/* The operator's deadline (invariant 14): on the run's clock (virtual
 * here, as in a replay), a request after it is refused and recorded, and
 * nothing leaves, a read no more than a mutation. */
static void test_deadline(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_clock *clock = ll_clock_new_virtual(1764547200000);
  ll_run *r = open_run(&w, "deadline.json", clock, 5, NULL, &err);
  CHECK(r != NULL);
  if (!r) {
    fw_cleanup(&w);
    return;
  }
  cJSON *row = NULL;
  ll_clock_sleep_ms(clock, 4900); /* inside the deadline: sent */
  CHECK_INT(send(r, LL_OP_GET_PROPERTIES, "observer", &row), LL_OK);
  cJSON_Delete(row);
  CHECK_INT(w.requests, 1);
  ll_clock_sleep_ms(clock, 200); /* 5.1 s after the open */
  fw_check_refused(r, &w, send(r, LL_OP_GET_PROPERTIES, "observer", &row),
                   LL_E_SCOPE, 14, 1);
  CHECK(row == NULL);
  CHECK(
      strstr(fw_str(fw_last(r), "message") ? fw_str(fw_last(r), "message") : "",
             "--deadline-s 5") != NULL);
  fw_check_refused(r, &w, send(r, LL_OP_CREATE_CONTAINER, "operator", &row),
                   LL_E_SCOPE, 14, 1);
  CHECK_INT(w.mutations, 0);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* A wire whose reads answer 3 s late on the run's virtual clock. */
static ll_clock *late_clock;
static ll_status late_exchange(ll_transport *t, const ll_http_request *q,
                               ll_http_response *resp, ll_error *err) {
  ll_status st = fw_exchange(t, q, resp, err);
  if (!q->mutation)
    ll_clock_sleep_ms(late_clock, 3000);
  return st;
}

/* The run's first mutation waits for its preflight: when that answer
 * comes after the deadline, the mutation is refused (helper-28: it was
 * sent, the deadline checked only before the preflight). */
static void test_deadline_preflight(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  late_clock = ll_clock_new_virtual(1764547200000);
  ll_run *r =
      open_run(&w, "deadline-pre.json", late_clock, 2, late_exchange, &err);
  CHECK(r != NULL);
  if (!r) {
    fw_cleanup(&w);
    return;
  }
  cJSON *row = NULL;
  fw_check_refused(r, &w, send(r, LL_OP_CREATE_CONTAINER, "operator", &row),
                   LL_E_SCOPE, 14, 1); /* the preflight alone left */
  CHECK_INT(w.mutations, 0);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* The bundle's bound (LL_RUN_EVIDENCE_MAX): notes of about 1 MB each
 * until refused; then no row but the decision is written, nothing is
 * sent, and the decision is still recorded. */
static void test_evidence_bound(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = open_run(&w, "bound.json", ll_clock_new_real(), 0, NULL, &err);
  CHECK(r != NULL);
  size_t n = 1000000;
  char *text = malloc(n + 1);
  CHECK(text != NULL);
  if (!r || !text) {
    free(text);
    ll_run_close(r);
    fw_cleanup(&w);
    return;
  }
  memset(text, 'x', n);
  text[n] = '\0';
  long notes = 0;
  ll_status st = LL_OK;
  while ((st = ll_run_note(r, "fill", text, &err)) == LL_OK && notes < 200)
    notes++;
  free(text);
  CHECK_INT(st, LL_E_SCOPE);
  CHECK(strstr(err.message, "reached its bound (128 MiB") != NULL);
  CHECK(notes >= 128 && notes <= 135);
  long rows = ll_ledger_count(ll_run_ledger(r));
  CHECK(ll_ledger_bytes(ll_run_ledger(r)) >= LL_RUN_EVIDENCE_MAX);
  /* a short note, a request and its refusal: none is written or sent */
  CHECK_INT(ll_run_note(r, "fill", "short", &err), LL_E_SCOPE);
  cJSON *row = NULL;
  CHECK(send(r, LL_OP_GET_PROPERTIES, "observer", &row) != LL_OK);
  CHECK(row == NULL);
  CHECK_INT(w.requests, 0);
  CHECK_INT(ll_ledger_count(ll_run_ledger(r)), rows);
  /* the decision is written past the bound */
  cJSON *dec = NULL;
  CHECK_INT(ll_run_decide(r, 1, &dec, &err), LL_OK);
  CHECK_STR(fw_str(dec, "record"), "decision");
  CHECK_STR(fw_str(dec, "decision"), "HOLD");
  CHECK_INT(ll_ledger_count(ll_run_ledger(r)), rows + 1);
  cJSON_Delete(dec);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* helper-29: an intent admitted just under the bound had its outcome
 * refused, so a request left with no outcome recorded. What completes an
 * admitted start is never refused by the bound. */
static void test_bound_completes(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r =
      open_run(&w, "bound-open.json", ll_clock_new_real(), 0, NULL, &err);
  CHECK(r != NULL);
  char *text = malloc(1000001);
  CHECK(text != NULL);
  if (!r || !text) {
    free(text);
    ll_run_close(r);
    fw_cleanup(&w);
    return;
  }
  /* notes until fewer than 4 kB are left under the bound */
  size_t used;
  while ((used = ll_ledger_bytes(ll_run_ledger(r))) + 4096 <
         LL_RUN_EVIDENCE_MAX) {
    size_t left = LL_RUN_EVIDENCE_MAX - used, n = left - 3000;
    if (n > 1000000)
      n = 1000000;
    memset(text, 'x', n);
    text[n] = '\0';
    if (ll_run_note(r, "fill", text, &err) != LL_OK)
      break;
  }
  free(text);
  CHECK(ll_ledger_bytes(ll_run_ledger(r)) < LL_RUN_EVIDENCE_MAX);
  /* reads until one is refused: each admitted one has its outcome */
  int sent = 0, refused = 0;
  for (int i = 0; i < 8 && !refused; i++) {
    cJSON *row = NULL;
    ll_status st = send(r, LL_OP_GET_PROPERTIES, "observer", &row);
    if (st == LL_OK) {
      sent++;
      CHECK_STR(fw_str(row, "record"), "outcome");
      CHECK_STR(fw_str(fw_last(r), "record"), "outcome");
    } else {
      refused = 1;
      CHECK_INT(st, LL_E_SCOPE);
      CHECK(row == NULL);
    }
    cJSON_Delete(row);
  }
  CHECK(sent >= 1);
  CHECK(refused);
  CHECK_INT(w.requests, sent);
  CHECK(ll_ledger_bytes(ll_run_ledger(r)) >= LL_RUN_EVIDENCE_MAX);
  /* the host's own stop and the decision still close it */
  CHECK_INT(ll_run_abandon(r, "it returned", &err), LL_OK);
  CHECK_INT(ll_run_decision(r), LL_DEC_HOLD);
  CHECK_STR(fw_str(fw_last(r), "record"), "decision");
  ll_run_close(r);
  fw_cleanup(&w);
}

int main(void) {
  root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (root) {
    CHECK_INT(mkdir(LOCKS, 0700), 0);
    test_deadline();
    test_deadline_preflight();
    test_evidence_bound();
    test_bound_completes();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_run_bounds");
}
