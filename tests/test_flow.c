/* core/run/flow.c through run.h: reconcile, the bracketed breaking probe,
 * the bounded poller and the decision record, each driven against the
 * in-process wire of fake_wire.h. A thin wrapper around that wire answers
 * reads as the lease's break runs (breaking/locked for a given number of
 * reads, then what the wire holds), overrides the lease state, loses the
 * answers to reads, sets the break's x-ms-lease-time, and times each
 * exchange on the run's clock as a real transport does. */
#include <stdlib.h>
#include <string.h>

#include "fake_wire.h"
#include "run.h"
#include "testlib.h"

typedef struct {
  fake_wire w;
  int breaking;         /* reads of the blob that answer breaking/locked */
  const char *state;    /* then every read answers this state, locked */
  int lose_reads;       /* reads whose answer is lost */
  const char *lease_ms; /* x-ms-lease-time of a break's answer, NULL: 0 */
  ll_clock *clock;      /* the run's (the run owns it) */
} flow_wire;

static ll_status flow_exchange(ll_transport *t, const ll_http_request *q,
                               ll_http_response *resp, ll_error *err) {
  flow_wire *f = t->impl;
  ll_transport inner = {.impl = &f->w};
  int64_t start = ll_clock_mono_ns(f->clock);
  ll_status st = fw_exchange(&inner, q, resp, err);
  resp->mono_start_ns = start;
  resp->mono_end_ns = ll_clock_mono_ns(f->clock);
  if (st != LL_OK || resp->outcome != LL_OUTCOME_RESPONSE)
    return st;
  int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
  const char *action = ll_headers_get(&q->headers, "x-ms-lease-action");
  if (read && resp->status == 200 && f->lose_reads > 0) {
    f->lose_reads--;
    ll_headers_clear(&resp->headers);
    resp->outcome = LL_OUTCOME_UNKNOWN;
    resp->status = 0;
    snprintf(resp->transport_error, sizeof resp->transport_error,
             "response lost (flow wire)");
  } else if (read && resp->status == 200 && (f->breaking > 0 || f->state)) {
    const char *state = f->breaking > 0 ? "breaking" : f->state;
    if (f->breaking > 0)
      f->breaking--;
    if (ll_headers_set(&resp->headers, "x-ms-lease-state", state) != LL_OK ||
        ll_headers_set(&resp->headers, "x-ms-lease-status", "locked") != LL_OK)
      resp->outcome = LL_OUTCOME_UNKNOWN;
  }
  if (action && strcmp(action, "break") == 0 && f->lease_ms &&
      ll_headers_set(&resp->headers, "x-ms-lease-time", f->lease_ms) != LL_OK)
    resp->outcome = LL_OUTCOME_UNKNOWN;
  return LL_OK;
}

static char *root;

static ll_run *flow_open(flow_wire *f, const char *name) {
  char ev[512], locks[512], blob[64];
  memset(f, 0, sizeof *f);
  fw_init(&f->w);
  snprintf(ev, sizeof ev, "%s/ev-%s", root, name);
  snprintf(locks, sizeof locks, "%s/locks", root);
  snprintf(blob, sizeof blob, "%s.json", name);
  ll_transport *t = calloc(1, sizeof *t);
  if (t) {
    t->exchange = flow_exchange;
    t->free = fw_free;
    t->impl = f;
  }
  f->clock = ll_clock_new_real();
  cJSON *man = fw_manifest();
  ll_run_config cfg = {.evidence_dir = ev,
                       .manifest = man,
                       .account_url = "http://127.0.0.1:9/devstoreaccount1",
                       .container = "lease-handoff-lab",
                       .blob = blob,
                       .lua_version = "Lua 5.4.6",
                       .transport = t,
                       .clock = f->clock,
                       .lock_dir = locks};
  ll_error err = {0};
  ll_run *r = ll_run_open(&cfg, &err);
  cJSON_Delete(man);
  if (!r)
    fprintf(stderr, "open %s: %s\n", name, err.message);
  return r;
}

static const char *str(const cJSON *row, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long num(const cJSON *row, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, k);
  return cJSON_IsNumber(v) ? (long)v->valuedouble : -999;
}

/* The export row n places before the last (0: the last). */
static const cJSON *back(ll_run *r, int n) {
  const cJSON *rows = ll_ledger_export_rows(ll_run_ledger(r));
  return cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1 - n);
}

static int rows_of(ll_run *r) {
  return cJSON_GetArraySize(ll_ledger_export_rows(ll_run_ledger(r)));
}

/* A lifecycle with revision 0 created and read back, A's lease taken and
 * revision 1 written under it and read back; revisions 2..5 of A
 * declared. */
static int leased(ll_run *r) {
  ll_error err = {0};
  int ok = 1;
  for (long rev = 0; rev <= 5; rev++)
    ok &= ll_run_declare(r, rev, "A", NULL, &err) == LL_OK;
  ok &= ll_run_bind(r, "A", &err) == LL_OK;
  ok &= fw_send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, NULL,
                &err) == LL_OK;
  ok &= ll_run_lifecycle(r, 0, "flow test", NULL, &err) == LL_OK;
  ok &= fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err) == LL_OK;
  ok &=
      fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err) == LL_OK;
  ok &= fw_send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, NULL, &err) == LL_OK;
  ok &= fw_send(r, LL_OP_PUT_BLOB, "A", "A", 1, 1, NULL, &err) == LL_OK;
  ok &=
      fw_send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, NULL, &err) == LL_OK;
  if (!ok)
    fprintf(stderr, "set-up: %s: %s\n", ll_code_name(err.code), err.message);
  return ok;
}

/* ...then the break, accepted with x-ms-lease-time 1 (not complete). */
static int broken_sent(flow_wire *f, ll_run *r) {
  ll_error err = {0};
  f->lease_ms = "1";
  int ok = leased(r) && fw_send(r, LL_OP_LEASE_BREAK, "operator", NULL, 0, -1,
                                NULL, &err) == LL_OK;
  CHECK(ok);
  if (!ok)
    fprintf(stderr, "break: %s: %s\n", ll_code_name(err.code), err.message);
  return ok;
}

/* ------------------------------------------------------------ reconcile */

static void test_reconcile(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "reconcile");
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK(leased(r));
  const ll_model *m = ll_run_model(r);
  ll_error err = {0};
  CHECK_INT(ll_model_unreconciled(m), -1);
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", "A", 1, 2, NULL, &err), LL_OK);
  CHECK_INT(ll_model_unreconciled(m), 2); /* revision 2 not read back */
  int sent = f.w.requests, puts = f.w.puts;
  cJSON *row = NULL;
  CHECK_INT(ll_run_reconcile(r, "settle", &row, &err), LL_OK);
  CHECK(row != NULL);
  CHECK_STR(str(row, "record"), "reconcile");
  CHECK_STR(str(row, "step"), "settle");
  CHECK_INT(f.w.requests, sent + 2); /* properties, then content */
  CHECK_INT(f.w.puts, puts);         /* reads only */
  /* intent and outcome of each read, then the reconcile row */
  CHECK_STR(str(back(r, 3), "record"), "outcome");
  CHECK_STR(str(back(r, 3), "operation"), "Get Blob Properties");
  CHECK_STR(str(back(r, 3), "step"), "settle: properties");
  CHECK_STR(str(back(r, 1), "record"), "outcome");
  CHECK_STR(str(back(r, 1), "operation"), "Get Blob");
  CHECK_STR(str(back(r, 1), "step"), "settle: content");
  CHECK_INT(ll_model_unreconciled(m), -1);
  cJSON_Delete(row);
  /* no label: the step is "reconcile" */
  row = NULL;
  CHECK_INT(ll_run_reconcile(r, NULL, &row, &err), LL_OK);
  CHECK_STR(str(row, "step"), "reconcile");
  CHECK_STR(str(back(r, 1), "step"), "reconcile: content");
  cJSON_Delete(row);
  /* a lost answer is recorded, and the reconcile row still follows */
  f.lose_reads = 2;
  int before = rows_of(r);
  row = NULL;
  CHECK_INT(ll_run_reconcile(r, "lost", &row, &err), LL_OK);
  CHECK_STR(str(row, "record"), "reconcile");
  CHECK_STR(str(back(r, 1), "outcome"), "UNKNOWN");
  CHECK(rows_of(r) > before + 2);
  cJSON_Delete(row);
  ll_run_close(r);
  fw_cleanup(&f.w);
}

/* ---------------------------------------------------------------- probe */

static void test_probe_refusals(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "probe-early");
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK(leased(r));
  int sent = f.w.requests;
  cJSON *row = NULL;
  ll_error err = {0};
  CHECK_INT(ll_run_probe(r, "A", 2, &row, &err), LL_E_ORDER);
  CHECK(strstr(err.message, "needs an accepted break") != NULL);
  CHECK(row == NULL);
  CHECK_INT(ll_run_probe(r, "B", 2, &row, &err), LL_E_USAGE);
  CHECK(strstr(err.message, "not bound to a lease") != NULL);
  CHECK(row == NULL);
  CHECK_INT(f.w.requests, sent); /* nothing sent */
  ll_run_close(r);
  fw_cleanup(&f.w);
}

typedef struct {
  const char *name;
  int breaking;       /* reads answering breaking/locked */
  int put_sent;       /* the probe's write went out */
  const char *reason; /* substring of the finding's reason, "" for none */
  const char *result; /* the fold's verdict on the finding (export) */
} probe_case;

/* The wire accepts the write under the breaking lease: inside a bracket
 * that reproduces the window; outside one it proves nothing. */
static const probe_case probe_cases[] = {
    {"bracketed: breaking before and after", 2, 1, "", "REPRODUCED"},
    {"crossed: broken after the write", 1, 1,
     "the write may have crossed the transition", "INCONCLUSIVE_WINDOW"},
    {"late: already broken", 0, 0, "a late probe proves nothing",
     "INCONCLUSIVE_WINDOW"},
};

static void test_probe(void) {
  for (size_t i = 0; i < sizeof probe_cases / sizeof probe_cases[0]; i++) {
    const probe_case *c = &probe_cases[i];
    int before = ll_test_fail;
    flow_wire f;
    char name[32];
    snprintf(name, sizeof name, "probe-%zu", i);
    ll_run *r = flow_open(&f, name);
    CHECK(r != NULL);
    if (!r)
      continue;
    if (broken_sent(&f, r)) {
      f.breaking = c->breaking;
      int sent = f.w.requests, puts = f.w.puts;
      cJSON *row = NULL;
      ll_error err = {0};
      CHECK_INT(ll_run_probe(r, "A", 2, &row, &err), LL_OK);
      CHECK_STR(str(row, "record"), "finding");
      CHECK_STR(str(row, "kind"), "window");
      CHECK_STR(str(row, "writer"), "A");
      CHECK_INT(num(row, "revision"), 2);
      CHECK_INT(f.w.puts, puts + c->put_sent);
      CHECK_INT(f.w.requests, sent + (c->put_sent ? 3 : 1));
      CHECK_INT(strlen(str(row, "put_event") ? str(row, "put_event") : "x") > 0,
                c->put_sent);
      CHECK_INT(
          cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(row, "bracket_ms")),
          c->put_sent);
      const char *reason = str(row, "reason");
      CHECK(reason && (c->reason[0] ? strstr(reason, c->reason) != NULL
                                    : reason[0] == '\0'));
      CHECK_STR(str(row, "result"), c->result);
      cJSON_Delete(row);
    }
    if (ll_test_fail > before)
      fprintf(stderr, "  in probe case \"%s\"\n", c->name);
    ll_run_close(r);
    fw_cleanup(&f.w);
  }
}

/* ----------------------------------------------------------------- poll */

typedef struct {
  const char *name;
  int breaking;      /* reads answering breaking/locked first */
  const char *state; /* then this state (NULL: what the wire holds) */
  int lose_reads;
  ll_poll_options o;
  const char *result;
  const char *reason; /* substring */
  long polls;
} poll_case;

static const poll_case poll_cases[] = {
    {"broken after two breaking reads",
     2,
     NULL,
     0,
     {.fixed_ms = 1, .floor_ms = 1, .budget = 10},
     "BROKEN",
     "broken/unlocked observed",
     3},
    {"the budget runs out",
     100,
     NULL,
     0,
     {.fixed_ms = 1, .floor_ms = 1, .budget = 3},
     "HOLD",
     "poll budget spent",
     3},
    {"an unexpected state",
     1,
     "leased",
     0,
     {.fixed_ms = 1, .floor_ms = 1, .budget = 10},
     "HOLD",
     "unexpected state leased/locked",
     2},
    {"a read whose answer is lost",
     0,
     NULL,
     1,
     {.fixed_ms = 1, .floor_ms = 1, .budget = 10},
     "HOLD",
     "a properties read failed",
     1},
    {"the deadline passes",
     100,
     NULL,
     0,
     {.deadline_ms = 30, .fixed_ms = 20, .floor_ms = 1, .budget = 10},
     "HOLD",
     "deadline passed",
     2},
};

static void test_wait_broken(void) {
  for (size_t i = 0; i < sizeof poll_cases / sizeof poll_cases[0]; i++) {
    const poll_case *c = &poll_cases[i];
    int before = ll_test_fail;
    flow_wire f;
    char name[32];
    snprintf(name, sizeof name, "poll-%zu", i);
    ll_run *r = flow_open(&f, name);
    CHECK(r != NULL);
    if (!r)
      continue;
    if (broken_sent(&f, r)) {
      f.breaking = c->breaking;
      f.state = c->state;
      f.lose_reads = c->lose_reads;
      int sent = f.w.requests;
      cJSON *row = NULL, *last = NULL;
      ll_error err = {0};
      CHECK_INT(ll_run_wait_broken(r, &c->o, &row, &last, &err), LL_OK);
      /* the hint came from the fold: nobody asked for the rows */
      CHECK(!ll_ledger_keeps_rows(ll_run_ledger(r)));
      /* the last read, handed over: the finding's last_event */
      CHECK_STR(str(last, "record"), "outcome");
      CHECK_STR(str(last, "operation"), "Get Blob Properties");
      CHECK_STR(str(last, "event_id"), str(row, "last_event"));
      cJSON_Delete(last);
      CHECK_STR(str(row, "record"), "finding");
      CHECK_STR(str(row, "kind"), "poll");
      CHECK_STR(str(row, "result"), c->result);
      const char *reason = str(row, "reason");
      CHECK(reason && strstr(reason, c->reason) != NULL);
      CHECK_INT(num(row, "polls"), c->polls);
      CHECK_INT(f.w.requests, sent + c->polls);
      CHECK_INT(num(row, "hint_s"), 1);
      CHECK_STR(str(row, "cadence"),
                c->o.fixed_ms == 20 ? "fixed 20 ms" : "fixed 1 ms");
      CHECK_INT(cJSON_IsNumber(
                    cJSON_GetObjectItemCaseSensitive(row, "lag_after_hint_ms")),
                strcmp(c->result, "BROKEN") == 0);
      cJSON_Delete(row);
    }
    if (ll_test_fail > before)
      fprintf(stderr, "  in poll case \"%s\"\n", c->name);
    ll_run_close(r);
    fw_cleanup(&f.w);
  }
}

/* Once a reader has asked for the rows, the last read handed over is a
 * reference to a kept row: deleting it leaves the kept row (ASan sees a
 * double free or a use after it). */
static void test_wait_broken_kept(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "poll-kept");
  CHECK(r != NULL);
  if (!r)
    return;
  if (broken_sent(&f, r)) {
    int rows = fw_count(r, "outcome"); /* asks: the rows are kept */
    CHECK(ll_ledger_keeps_rows(ll_run_ledger(r)));
    f.breaking = 1;
    cJSON *row = NULL, *last = NULL;
    ll_error err = {0};
    ll_poll_options o = {.fixed_ms = 1, .floor_ms = 1, .budget = 10};
    CHECK_INT(ll_run_wait_broken(r, &o, &row, &last, &err), LL_OK);
    CHECK_STR(str(row, "result"), "BROKEN");
    CHECK_STR(str(last, "event_id"), str(row, "last_event"));
    cJSON_Delete(last);
    cJSON_Delete(row);
    CHECK_INT(fw_count(r, "outcome"), rows + 2);
    CHECK_STR(str(fw_last(r), "record"), "finding");
  }
  ll_run_close(r);
  fw_cleanup(&f.w);
}

static void test_wait_needs_break(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "poll-early");
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK(leased(r));
  int sent = f.w.requests;
  cJSON *row = NULL;
  ll_error err = {0};
  ll_poll_options o = {.fixed_ms = 1};
  cJSON *last = (cJSON *)&o; /* set to NULL even on a refusal */
  CHECK_INT(ll_run_wait_broken(r, &o, &row, &last, &err), LL_E_ORDER);
  CHECK(strstr(err.message, "needs an accepted break") != NULL);
  CHECK(row == NULL);
  CHECK(last == NULL);
  CHECK_INT(f.w.requests, sent);
  ll_run_close(r);
  fw_cleanup(&f.w);
}

/* ------------------------------------------------------------- decision */

static int count(ll_run *r, const char *rec) {
  return fw_count(r, rec);
}

static void test_decide(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "decide");
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK(leased(r));
  ll_error err = {0};
  /* an answer lost after the write: a doubt the decision must carry */
  f.w.lose_next_mutation = 1;
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", "A", 1, 3, NULL, &err),
            LL_E_TRANSPORT);
  int sent = f.w.requests, rows = rows_of(r);
  cJSON *preview = NULL;
  CHECK_INT(ll_run_decide(r, 0, &preview, &err), LL_OK);
  CHECK_STR(str(preview, "record"), "decision");
  CHECK_STR(str(preview, "decision"), "HOLD");
  CHECK_INT(num(preview, "open_doubts"), 1);
  CHECK(cJSON_IsBool(
      cJSON_GetObjectItemCaseSensitive(preview, "accept_reachable")));
  CHECK(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(preview, "reasons")));
  CHECK(str(preview, "statement") && str(preview, "statement")[0]);
  /* a preview records nothing and sends nothing */
  CHECK_INT(rows_of(r), rows);
  CHECK_INT(count(r, "decision"), 0);
  CHECK_INT(ll_run_decision(r), -1);
  CHECK_INT(f.w.requests, sent);
  cJSON *rec = NULL;
  CHECK_INT(ll_run_decide(r, 1, &rec, &err), LL_OK);
  CHECK_STR(str(rec, "record"), "decision");
  CHECK_STR(str(rec, "decision"), str(preview, "decision"));
  CHECK_INT(count(r, "decision"), 1);
  CHECK_INT(ll_run_decision(r), LL_DEC_HOLD);
  CHECK_INT(f.w.requests, sent);
  /* the recorded row carries no preview-only field */
  CHECK(cJSON_GetObjectItemCaseSensitive(rec, "accept_reachable") == NULL);
  cJSON_Delete(rec);
  cJSON_Delete(preview);
  /* once only */
  rec = NULL;
  CHECK_INT(ll_run_decide(r, 1, &rec, &err), LL_E_ORDER);
  CHECK(strstr(err.message, "already recorded") != NULL);
  CHECK(rec == NULL);
  CHECK_INT(count(r, "decision"), 1);
  /* a preview still answers after the decision */
  CHECK_INT(ll_run_decide(r, 0, &rec, &err), LL_OK);
  CHECK_STR(str(rec, "decision"), "HOLD");
  cJSON_Delete(rec);
  ll_run_close(r);
  fw_cleanup(&f.w);
}

/* A run without a doubt previews with no open doubt: the doubt above is
 * what made the difference. */
static void test_decide_clean(void) {
  flow_wire f;
  ll_run *r = flow_open(&f, "decide-clean");
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK(leased(r));
  cJSON *row = NULL;
  ll_error err = {0};
  CHECK_INT(ll_run_decide(r, 0, &row, &err), LL_OK);
  CHECK_INT(num(row, "open_doubts"), 0);
  cJSON_Delete(row);
  ll_run_close(r);
  fw_cleanup(&f.w);
}

int main(void) {
  root = ll_test_tmpdir();
  if (!root) {
    fprintf(stderr, "no temporary directory\n");
    return 1;
  }
  test_reconcile();
  test_probe_refusals();
  test_probe();
  test_wait_needs_break();
  test_wait_broken();
  test_wait_broken_kept();
  test_decide();
  test_decide_clean();
  ll_test_rmtree(root);
  free(root);
  return ll_test_report("test_flow");
}
