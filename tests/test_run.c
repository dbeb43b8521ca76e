/* One evidence run (core/run), through run.h and ledger.h only, against
 * the in-process wire of fake_wire.h: what ll_run_open refuses before
 * anything is written or sent, what a fresh run holds, the order every
 * request passes (preflight, guard, intent, the one attempt, the outcome
 * row), what the export hides, the HOLD latch, and a process that dies
 * with a request in flight, recovered as UNKNOWN_OUTCOME. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_wire.h"
#include "ledger.h"
#include "run.h"
#include "testlib.h"

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

#define LOCKS path("locks")

/* The whole text of a file, or NULL. Caller frees. */
static char *slurp(const char *p) {
  FILE *f = fopen(p, "rb");
  if (!f)
    return NULL;
  char *s = NULL;
  size_t n = 0, cap = 0, got;
  char chunk[4096];
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (n + got + 1 > cap) {
      cap = (n + got + 1) * 2;
      char *t = realloc(s, cap);
      if (!t) {
        free(s);
        fclose(f);
        return NULL;
      }
      s = t;
    }
    memcpy(s + n, chunk, got);
    n += got;
  }
  fclose(f);
  if (!s)
    s = calloc(1, 1);
  else
    s[n] = '\0';
  return s;
}

static ll_run_config config(fake_wire *w, const char *evidence,
                            const cJSON *manifest, int recover) {
  ll_run_config cfg = {.evidence_dir = evidence,
                       .recover = recover,
                       .manifest = manifest,
                       .account_url = "http://127.0.0.1:9/devstoreaccount1",
                       .container = "lease-handoff-lab",
                       .blob = "run.json",
                       .lua_version = "Lua 5.4.6",
                       .transport = fw_transport(w),
                       .clock = ll_clock_new_real(),
                       .lock_dir = LOCKS};
  return cfg;
}

typedef struct {
  const char *name;
  const char *evidence; /* leaf under root; NULL: none given */
  int with_manifest;
  const char *account_url; /* NULL: the loopback default */
  int no_transport;
  int stray_file; /* the evidence directory already holds a file */
  ll_code want;
  const char *message;
} open_case;

static const open_case open_cases[] = {
    {"no evidence directory", NULL, 1, NULL, 0, 0, LL_E_USAGE, "--evidence"},
    {"no manifest for a fresh run", "ev-noman", 0, NULL, 0, 0, LL_E_MANIFEST,
     NULL},
    {"an evidence directory that already holds a file", "ev-used", 1, NULL, 0,
     1, LL_E_EVIDENCE_EXISTS, NULL},
    {"plain http outside loopback (invariant 10)", "ev-http", 1,
     "http://example.com/acct", 0, 0, LL_E_INSECURE, NULL},
    {"no transport", "ev-notransport", 1, NULL, 1, 0, LL_E_USAGE, "transport"},
};

/* Every refusal of ll_run_open comes before any request, and (but for the
 * directory that was already there) leaves no evidence directory. */
static void test_open_refusals(void) {
  for (size_t i = 0; i < sizeof open_cases / sizeof open_cases[0]; i++) {
    const open_case *c = &open_cases[i];
    int before = ll_test_fail;
    fake_wire w;
    fw_init(&w);
    cJSON *man = c->with_manifest ? fw_manifest() : NULL;
    const char *ev = c->evidence ? path(c->evidence) : NULL;
    if (c->stray_file) {
      CHECK_INT(mkdir(ev, 0700), 0);
      FILE *f = fopen(path("ev-used/mine.txt"), "w");
      CHECK(f != NULL);
      if (f) {
        fputs("not evidence\n", f);
        fclose(f);
      }
    }
    ll_run_config cfg = config(&w, ev, man, 0);
    if (c->account_url)
      cfg.account_url = c->account_url;
    if (c->no_transport) {
      ll_transport_free(cfg.transport);
      cfg.transport = NULL;
    }
    ll_error err = {0};
    ll_run *r = ll_run_open(&cfg, &err);
    CHECK(r == NULL);
    CHECK_INT(err.code, c->want);
    if (c->message)
      CHECK(strstr(err.message, c->message) != NULL);
    CHECK(err.message[0] != '\0');
    CHECK_INT(w.requests, 0);
    if (ev && !c->stray_file)
      CHECK(access(ev, F_OK) != 0);
    if (c->stray_file) {
      char *kept = slurp(path("ev-used/mine.txt"));
      CHECK_STR(kept, "not evidence\n");
      free(kept);
      CHECK(access(path("ev-used/protected"), F_OK) != 0);
    }
    if (ll_test_fail > before)
      fprintf(stderr, "  in open case \"%s\": %s: %s\n", c->name,
              ll_code_name(err.code), err.message);
    ll_run_close(r);
    cJSON_Delete(man);
    fw_cleanup(&w);
  }
  ll_run_close(NULL); /* harmless */
}

/* A fresh run: the manifest is row 1 of both ledgers, the files are there
 * with their modes, and nothing was sent. */
static void test_open_fresh(void) {
  fake_wire w;
  fw_init(&w);
  cJSON *man = fw_manifest();
  ll_run_config cfg = config(&w, path("ev-fresh"), man, 0);
  ll_error err = {0};
  ll_run *r = ll_run_open(&cfg, &err);
  cJSON_Delete(man);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "open: %s\n", err.message);
    return;
  }
  CHECK_INT(w.requests, 0);
  const cJSON *rows = ll_ledger_export_rows(ll_run_ledger(r));
  const cJSON *first = cJSON_GetArrayItem(rows, 0);
  CHECK_STR(fw_str(first, "record"), "manifest");
  CHECK_INT(fw_num(first, "seq"), 1);
  CHECK_STR(fw_str(first, "prev_hash"), LL_GENESIS_HASH);
  CHECK_STR(fw_str(first, "endpoint_kind"), "emulator");
  CHECK_STR(fw_str(first, "blob_path"),
            "/devstoreaccount1/lease-handoff-lab/run.json");
  CHECK_STR(fw_str(first, "resource_owner"), "storage-team");
  CHECK(ll_run_id(r) != NULL && ll_run_id(r)[0] != '\0');
  CHECK_STR(fw_str(first, "run_id"), ll_run_id(r));
  CHECK_INT(ll_run_decision(r), -1);
  struct stat st;
  CHECK(stat(path("ev-fresh"), &st) == 0 && (st.st_mode & 0777) == 0700);
  CHECK(stat(path("ev-fresh/protected"), &st) == 0 &&
        (st.st_mode & 0777) == 0700);
  CHECK(stat(path("ev-fresh/protected/ledger.jsonl"), &st) == 0 &&
        (st.st_mode & 0777) == 0600);
  CHECK(access(path("ev-fresh/export/ledger.jsonl"), F_OK) == 0);
  CHECK(access(path("ev-fresh/manifest.json"), F_OK) == 0);
  CHECK(access(path("ev-fresh/environment.json"), F_OK) == 0);
  /* a second open of the same directory is refused: it holds evidence */
  fake_wire w2;
  fw_init(&w2);
  cJSON *man2 = fw_manifest();
  ll_run_config cfg2 = config(&w2, path("ev-fresh"), man2, 0);
  cfg2.blob = "other.json"; /* not the lock: the directory refuses it */
  CHECK(ll_run_open(&cfg2, &err) == NULL);
  CHECK_INT(err.code, LL_E_EVIDENCE_EXISTS);
  CHECK_INT(w2.requests, 0);
  cJSON_Delete(man2);
  ll_run_close(r);
  fw_cleanup(&w);
}

static ll_status send(ll_run *r, ll_op op, const char *actor, const char *lease,
                      int bound, long rev, cJSON **row) {
  ll_error err = {0};
  *row = NULL;
  return fw_send(r, op, actor, lease, bound, rev, row, &err);
}

/* The row of the given record and event_id in rows, or NULL. */
static const cJSON *find(const cJSON *rows, const char *rec, const char *ev) {
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *rr = fw_str(row, "record"), *e = fw_str(row, "event_id");
    if (rr && e && strcmp(rr, rec) == 0 && strcmp(e, ev) == 0)
      return row;
  }
  return NULL;
}

static void test_request_pipeline(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, path("ev-req"), "req.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "open: %s\n", err.message);
    return;
  }
  const cJSON *rows = ll_ledger_export_rows(ll_run_ledger(r));
  cJSON *row = NULL;

  /* undeclared payload: refused by the guard, nothing sent (invariant 6) */
  fw_check_refused(r, &w, send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, &row),
                   LL_E_UNDECLARED, 6, 0);
  CHECK(row == NULL);
  CHECK_INT(ll_run_declare(r, 0, "A", NULL, &err), LL_OK);
  CHECK_INT(ll_run_declare(r, 1, "A", NULL, &err), LL_OK);
  CHECK_INT(ll_run_declare(r, 2, "A", NULL, &err), LL_OK);

  /* the run's first mutation is preceded by the preflight read */
  CHECK_INT(send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, &row),
            LL_OK);
  CHECK_INT(w.requests, 2);
  CHECK_INT(w.mutations, 1);
  CHECK_STR(fw_str(row, "record"), "outcome");
  CHECK_STR(fw_str(row, "operation"), "Create Container");
  CHECK_INT(fw_num(row, "http_status"), 201);
  CHECK_INT(fw_num(row, "emitted_requests"), 1);
  CHECK_STR(fw_str(row, "endpoint_kind"), "emulator");
  /* the handed row is the recorded export row */
  CHECK_INT(fw_num(row, "seq"), fw_num(fw_last(r), "seq"));
  const char *ev = fw_str(row, "event_id");
  const cJSON *intent = ev ? find(rows, "intent", ev) : NULL;
  CHECK(intent != NULL);
  CHECK(intent && fw_num(intent, "seq") < fw_num(row, "seq"));
  CHECK_STR(fw_str(intent, "operation"), "Create Container");
  int preflights = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, rows) {
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "preflight")) &&
        strcmp(fw_str(it, "record"), "outcome") == 0) {
      preflights++;
      CHECK_STR(fw_str(it, "operation"), "Get Blob Properties");
      CHECK_INT(fw_num(it, "http_status"), 404);
      CHECK_STR(fw_str(it, "result_classification"), "STATE_OBSERVED");
      CHECK(intent && fw_num(it, "seq") < fw_num(intent, "seq"));
    }
  }
  CHECK_INT(preflights, 1);
  cJSON_Delete(row);

  /* the lifecycle's first Put creates only: If-None-Match: * */
  CHECK_INT(send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, &row), LL_OK);
  CHECK_INT(w.requests, 3); /* no second preflight */
  CHECK_INT(fw_num(row, "http_status"), 201);
  CHECK_STR(fw_str(row, "result_classification"), "ACCEPTED_WRITE");
  CHECK_INT(fw_num(row, "payload_revision"), 0);
  CHECK(strstr(fw_str(row, "request_shape") ? fw_str(row, "request_shape") : "",
               "if_none_match=*") != NULL);
  ev = fw_str(row, "event_id");
  intent = ev ? find(rows, "intent", ev) : NULL;
  CHECK_STR(fw_str(intent, "if_none_match"), "*");
  CHECK_STR(fw_str(intent, "payload_sha256"), fw_str(row, "payload_sha256"));
  cJSON_Delete(row);

  /* no mutation before the accepted write is read back (invariant 4) */
  fw_check_refused(r, &w, send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 1, &row),
                   LL_E_UNRECONCILED, 4, 3);
  CHECK_INT(send(r, LL_OP_GET_BLOB, "observer", NULL, 0, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "content_revision"), 0);
  cJSON_Delete(row);

  /* a bound writer's lease ID reaches the wire, never the export */
  CHECK_INT(ll_run_bind(r, "A", &err), LL_OK);
  CHECK_INT(ll_run_is_bound(r, "A"), 1);
  CHECK_INT(ll_run_is_bound(r, "B"), 0);
  CHECK_INT(send(r, LL_OP_LEASE_ACQUIRE, "A", "A", 1, -1, &row), LL_OK);
  CHECK_INT(fw_num(row, "http_status"), 201);
  CHECK_STR(fw_str(row, "result_classification"), "ACCEPTED_WRITE");
  CHECK(strlen(w.holder) == 36);
  cJSON_Delete(row);

  /* a bound writer never sends without its lease (invariant 5) */
  fw_check_refused(r, &w, send(r, LL_OP_PUT_BLOB, "A", NULL, 1, 1, &row),
                   LL_E_LEASE_PRECONDITION, 5, 5);

  /* the answer to a mutation is lost after the service applied it */
  w.lose_next_mutation = 1;
  CHECK_INT(send(r, LL_OP_PUT_BLOB, "A", "A", 1, 1, &row), LL_E_TRANSPORT);
  CHECK_INT(w.puts, 2); /* applied */
  CHECK(row != NULL);
  CHECK_STR(fw_str(row, "outcome"), "UNKNOWN");
  CHECK_STR(fw_str(row, "result_classification"), "UNKNOWN_OUTCOME");
  CHECK_STR(fw_str(row, "lease_alias_supplied"), "A");
  CHECK(fw_str(row, "transport_error") != NULL);
  cJSON_Delete(row);
  CHECK_INT(ll_model_doubts(ll_run_model(r)), 1);
  /* the HOLD latch: no mutation, reads still go out (invariant 3) */
  fw_check_refused(r, &w, send(r, LL_OP_PUT_BLOB, "A", "A", 1, 2, &row),
                   LL_E_HOLD, 3, 6);
  CHECK_INT(send(r, LL_OP_GET_PROPERTIES, "observer", NULL, 0, -1, &row),
            LL_OK);
  CHECK_INT(w.requests, 7);
  CHECK_STR(fw_str(row, "observed_lease_state"), "leased");
  cJSON_Delete(row);
  char holder[64];
  snprintf(holder, sizeof holder, "%s", w.holder);
  long rows_in_run = ll_ledger_count(ll_run_ledger(r));
  ll_run_close(r);

  /* on disk: both chains hold, seq agrees, the real ID only in protected */
  cJSON *prot = NULL, *exp = NULL;
  long bad = 0;
  CHECK_INT(ll_ledger_read_file(path("ev-req/protected/ledger.jsonl"), &prot,
                                &bad, &err),
            LL_OK);
  CHECK_INT(
      ll_ledger_read_file(path("ev-req/export/ledger.jsonl"), &exp, &bad, &err),
      LL_OK);
  CHECK_INT(cJSON_GetArraySize(prot), rows_in_run);
  CHECK_INT(cJSON_GetArraySize(exp), rows_in_run);
  char *ptext = slurp(path("ev-req/protected/ledger.jsonl"));
  char *etext = slurp(path("ev-req/export/ledger.jsonl"));
  CHECK(ptext && strstr(ptext, holder) != NULL);
  CHECK(ptext && strstr(ptext, "\"lease_real_id\"") != NULL);
  CHECK(etext && strstr(etext, holder) == NULL);
  char head[9];
  memcpy(head, holder, 8); /* the ID's first group, in any row */
  head[8] = '\0';
  CHECK(etext && strstr(etext, head) == NULL);
  CHECK(etext && strstr(etext, "\"lease_real_id\"") == NULL);
  free(ptext);
  free(etext);
  cJSON_Delete(prot);
  cJSON_Delete(exp);
  fw_cleanup(&w);
}

/* The wire of a process killed with its request in flight: the request
 * never gets an answer because the process is gone. */
static ll_status die_exchange(ll_transport *t, const ll_http_request *q,
                              ll_http_response *resp, ll_error *err) {
  if (q->mutation)
    _exit(9);
  return fw_exchange(t, q, resp, err);
}

/* Write-ahead evidence (invariant 2): the intent is on disk before the
 * request leaves, so a process that dies there leaves an intent without
 * an outcome, which the recovering run records as UNKNOWN_OUTCOME and
 * holds on (invariant 3). */
static void test_crash_recovered(void) {
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    fake_wire w;
    fw_init(&w);
    cJSON *man = fw_manifest();
    ll_run_config cfg = config(&w, path("ev-crash"), man, 0);
    cfg.blob = "crash.json"; /* not beside ev-fresh's undecided run.json */
    cfg.transport->exchange = die_exchange;
    ll_error err = {0};
    ll_run *r = ll_run_open(&cfg, &err);
    if (!r || ll_run_declare(r, 0, "A", NULL, &err) != LL_OK) {
      fprintf(stderr, "child: %s\n", err.message);
      _exit(3);
    }
    cJSON *row = NULL;
    (void)fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, &row, &err);
    _exit(4); /* not reached: the Put kills the process */
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9);

  fake_wire w;
  fw_init(&w);
  ll_run_config cfg = config(&w, path("ev-crash"), NULL, 1);
  cfg.blob = "crash.json";
  ll_error err = {0};
  ll_run *r = ll_run_open(&cfg, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "recover: %s\n", err.message);
    fw_cleanup(&w);
    return;
  }
  CHECK_INT(w.requests, 0); /* reopening sends nothing */
  const cJSON *rows = ll_ledger_export_rows(ll_run_ledger(r));
  const cJSON *rec = NULL, *it;
  int intents = 0, unknown = 0;
  cJSON_ArrayForEach(it, rows) {
    const char *k = fw_str(it, "record");
    if (k && strcmp(k, "recovery") == 0)
      rec = it;
    if (k && strcmp(k, "intent") == 0 && fw_str(it, "operation") &&
        strcmp(fw_str(it, "operation"), "Put Blob") == 0)
      intents++;
    if (k && strcmp(k, "outcome") == 0 &&
        strcmp(fw_str(it, "result_classification"), "UNKNOWN_OUTCOME") == 0) {
      unknown++;
      CHECK_STR(fw_str(it, "operation"), "Put Blob");
      CHECK_STR(fw_str(it, "outcome"), "UNKNOWN");
      CHECK(rec != NULL); /* written after the recovery row */
    }
  }
  CHECK(rec != NULL);
  CHECK_INT(fw_num(rec, "open_intents"), 1);
  CHECK_INT(intents, 1);
  CHECK_INT(unknown, 1);
  CHECK_INT(ll_model_doubts(ll_run_model(r)), 1);
  cJSON *row = NULL;
  fw_check_refused(r, &w, send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, &row),
                   LL_E_HOLD, 3, 0);
  cJSON *dec = NULL;
  CHECK_INT(ll_run_decide(r, 0, &dec, &err), LL_OK);
  CHECK_STR(fw_str(dec, "decision"), "HOLD");
  cJSON_Delete(dec);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* The flow's declared actors bound every writer's request, bound or not:
 * an undeclared one is refused before anything is sent (helper-33: an
 * unbound writer skipped the check); the roles are the host's. */
static void test_undeclared_actor(void) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, path("ev-actors"), "actors.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r)
    return;
  ll_flow_plan fp = {.name = "actors",
                     .actors = {"A", "operator", "observer"},
                     .nactors = 3,
                     .break_periods = {0},
                     .nbreaks = 1,
                     .window_attempts = 1};
  CHECK_INT(ll_run_plan(r, &fp, NULL, &err), LL_OK);
  CHECK_INT(ll_run_declare(r, 0, "B", NULL, &err), LL_OK);
  CHECK_INT(
      fw_send(r, LL_OP_CREATE_CONTAINER, "operator", NULL, 0, -1, NULL, &err),
      LL_OK);
  int sent = w.requests;
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "B", NULL, 0, 0, NULL, &err),
            LL_E_USAGE);
  CHECK(strstr(err.message, "actor B is not among the actors the flow "
                            "declared at open") != NULL);
  /* not in the manifest either: the guard says so first */
  CHECK(fw_send(r, LL_OP_PUT_BLOB, "A ", NULL, 0, 0, NULL, &err) != LL_OK);
  CHECK_INT(w.requests, sent);
  CHECK_INT(fw_count(r, "refusal"), 2);
  ll_run_close(r);
  fw_cleanup(&w);
}

int main(void) {
  root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (root) {
    CHECK_INT(mkdir(LOCKS, 0700), 0);
    test_open_refusals();
    test_open_fresh();
    test_request_pipeline();
    test_crash_recovered();
    test_undeclared_actor();
    ll_test_rmtree(root);
    free(root);
  }
  return ll_test_report("test_run");
}
