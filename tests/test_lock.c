/* One run per blob (invariant 14): the per-blob flock held from open to
 * close, the private lock directory, and the refusal of a fresh run beside
 * a previous run on the blob that left no decision or an open HOLD latch
 * (recovery of that run being the way out). Runs go through ll_run_open
 * against an in-process wire. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_wire.h"
#include "jsonx.h"
#include "lock.h"
#include "testlib.h"

static char *root;

static const char *path(const char *leaf) {
  return ll_test_path(root, leaf);
}

static void mkdirs(const char *leaf) {
  char cmd[700];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path(leaf));
  CHECK_INT(system(cmd), 0);
}

#define LOCKS path("locks")

/* A run that leaves an UNKNOWN_OUTCOME open; finished (recorded
 * decision) or not. */
static void doubtful_run(const char *evidence, const char *blob, int finish) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, evidence, blob, LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r) {
    fprintf(stderr, "open %s: %s\n", evidence, err.message);
    return;
  }
  CHECK_INT(ll_run_declare(r, 0, "A", NULL, &err), LL_OK);
  w.lose_next_mutation = 1;
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err),
            LL_E_TRANSPORT);
  CHECK_INT(ll_model_doubts(ll_run_model(r)), 1);
  if (finish) {
    cJSON *d = NULL;
    CHECK_INT(ll_run_decide(r, 1, &d, &err), LL_OK);
    cJSON_Delete(d);
  }
  ll_run_close(r);
  fw_cleanup(&w);
}

static void test_second_open_refused(void) {
  fake_wire w1, w2;
  fw_init(&w1);
  fw_init(&w2);
  ll_error err = {0};
  mkdirs("r1");
  mkdirs("r2");
  ll_run *a = fw_open(&w1, path("r1/a"), "busy.json", LOCKS, 0, &err);
  CHECK(a != NULL);
  /* same blob, another evidence root: the lock refuses it, naming both */
  ll_run *b = fw_open(&w2, path("r2/b"), "busy.json", LOCKS, 0, &err);
  CHECK(b == NULL);
  CHECK_INT(err.code, LL_E_SCOPE);
  CHECK(strstr(err.message, "/devstoreaccount1/lease-handoff-lab/busy.json") !=
        NULL);
  CHECK(strstr(err.message, "is in use by another run") != NULL);
  CHECK(strstr(err.message, path("r1/a")) != NULL);
  char pid[32];
  snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
  CHECK(strstr(err.message, pid) != NULL);
  CHECK(strchr(err.message, '\n') == NULL);
  CHECK_INT(w2.requests, 0);
  CHECK(access(path("r2/b"), F_OK) != 0); /* nothing was written */
  /* another blob is free */
  ll_run *c = fw_open(&w2, path("r2/c"), "other.json", LOCKS, 0, &err);
  CHECK(c != NULL);
  ll_run_close(c);
  /* the host name is compared without case */
  ll_run_config cfg = {0};
  cJSON *man = fw_manifest();
  cfg.evidence_dir = path("r2/d");
  cfg.manifest = man;
  cfg.account_url = "http://127.0.0.1:9/devstoreaccount1";
  cfg.container = "lease-handoff-lab";
  cfg.blob = "busy.json";
  cfg.transport = fw_transport(&w2);
  cfg.clock = ll_clock_new_real();
  cfg.lock_dir = LOCKS;
  cfg.fixture_label = "emulator"; /* a replay locks nothing */
  ll_run *rp = ll_run_open(&cfg, &err);
  CHECK(rp != NULL);
  ll_run_close(rp);
  cJSON_Delete(man);
  /* once the first run is closed, the blob is free again */
  ll_run_close(a);
  b = fw_open(&w2, path("r2/b"), "busy.json", LOCKS, 0, &err);
  CHECK(b != NULL);
  ll_run_close(b);
  fw_cleanup(&w1);
  fw_cleanup(&w2);
}

static void test_previous_run(void) {
  ll_error err = {0};
  fake_wire w;
  fw_init(&w);
  mkdirs("root");
  /* a run that ended (closed, process gone) without a decision */
  doubtful_run(path("root/first"), "prev.json", 0);
  ll_run *r = fw_open(&w, path("root/second"), "prev.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK_INT(err.code, LL_E_SCOPE);
  CHECK(strstr(err.message, path("root/first")) != NULL);
  CHECK(strstr(err.message, "ended without a decision") != NULL);
  CHECK(strstr(err.message, "scripts/recovery.lua --evidence") != NULL);
  CHECK(strchr(err.message, '\n') == NULL);
  CHECK_INT(w.requests, 0);
  /* the same server spelt otherwise, and a directory named by "." or
   * ".." (helper-30: each listed no earlier run) */
  const char *blob = "/devstoreaccount1/lease-handoff-lab/prev.json";
  CHECK_INT(
      ll_lock_check_previous(path("root/second"), "localhost:9", blob, &err),
      LL_E_SCOPE);
  CHECK(strstr(err.message, path("root/first")) != NULL);
  CHECK_INT(
      ll_lock_check_previous(path("root/second"), "127.0.0.1:19", blob, &err),
      LL_OK);
  mkdirs("root/series");
  CHECK_INT(
      ll_lock_check_previous(path("root/series/."), "127.0.0.1:9", blob, &err),
      LL_E_USAGE);
  CHECK(strstr(err.message, "ends in '.' or '..'") != NULL);
  CHECK_INT(ll_lock_check_previous(path("root/series/..//"), "127.0.0.1:9",
                                   blob, &err),
            LL_E_USAGE);
  /* another blob in the same root is not concerned */
  r = fw_open(&w, path("root/third"), "unrelated.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);

  /* the recovery of that very run is allowed; it settles the doubt */
  fake_wire rw;
  fw_init(&rw);
  rw.body = strdup("{\"purpose\":\"lease-handoff-lab\",\"revision\":0,"
                   "\"writer\":\"A\"}");
  rw.len = rw.body ? strlen(rw.body) : 0;
  r = fw_open(&rw, path("root/first"), "prev.json", LOCKS, 1, &err);
  CHECK(r != NULL);
  if (r) {
    cJSON *row = NULL;
    CHECK_INT(ll_run_reconcile(r, "reconcile", &row, &err), LL_OK);
    CHECK_STR(ll_json_str(row, "result"), "DOUBTFUL_WRITE_COMMITTED");
    cJSON_Delete(row);
    CHECK_INT(ll_run_decide(r, 1, &row, &err), LL_OK);
    CHECK_INT(ll_json_long(row, "open_doubts", -1), 0);
    cJSON_Delete(row);
    ll_run_close(r);
  }
  fw_cleanup(&rw);
  r = fw_open(&w, path("root/second"), "prev.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);

  /* a recorded decision with the latch still open blocks too */
  mkdirs("latch");
  doubtful_run(path("latch/first"), "latch.json", 1);
  r = fw_open(&w, path("latch/second"), "latch.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "left an open HOLD latch (1 unreconciled") != NULL);
  CHECK(strstr(err.message, path("latch/first")) != NULL);
  fw_cleanup(&w);
}

/* A run that sends one answered Put and records its decision (no open
 * doubt), then rows appended to its export ledger after the decision. */
static void decided_then(const char *evidence, const char *blob,
                         const char *appended) {
  fake_wire w;
  fw_init(&w);
  ll_error err = {0};
  ll_run *r = fw_open(&w, evidence, blob, LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r)
    return;
  CHECK_INT(ll_run_declare(r, 0, "A", NULL, &err), LL_OK);
  CHECK_INT(fw_send(r, LL_OP_PUT_BLOB, "A", NULL, 0, 0, NULL, &err), LL_OK);
  cJSON *d = NULL;
  CHECK_INT(ll_run_decide(r, 1, &d, &err), LL_OK);
  CHECK_INT(ll_json_long(d, "open_doubts", -1), 0);
  cJSON_Delete(d);
  ll_run_close(r);
  fw_cleanup(&w);
  char ledger[600];
  snprintf(ledger, sizeof ledger, "%s/export/ledger.jsonl", evidence);
  FILE *f = fopen(ledger, "a");
  CHECK(f != NULL);
  if (f) {
    fputs(appended, f);
    fclose(f);
  }
}

/* The lock reads a previous run's decision through the predicate verify
 * uses (ll_verify_stands): a decision that a request row follows does not
 * stand, and the run beside it is refused; one that only a note follows
 * still does; an unreadable last line unseats it too. */
static void test_decision_unseated(void) {
  ll_error err = {0};
  fake_wire w;
  fw_init(&w);
  mkdirs("unseated");
  decided_then(path("unseated/first"), "unseated.json",
               "{\"seq\":90,\"record\":\"intent\",\"event_id\":"
               "\"e0090\",\"operation\":\"Put Blob\",\"actor_alias\":"
               "\"A\"}\n");
  ll_run *r =
      fw_open(&w, path("unseated/second"), "unseated.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK_INT(err.code, LL_E_SCOPE);
  CHECK(strstr(err.message, path("unseated/first")) != NULL);
  CHECK(strstr(err.message, "a request after it (row 90) unseats") != NULL);
  CHECK(strstr(err.message, "without a decision that stands") != NULL);
  CHECK_INT(w.requests, 0);
  ll_run_close(r);

  mkdirs("answered");
  decided_then(path("answered/first"), "answered.json",
               "{\"seq\":90,\"record\":\"outcome\",\"event_id\":"
               "\"e0090\",\"operation\":\"Put Blob\",\"actor_alias\":"
               "\"A\"}\n");
  r = fw_open(&w, path("answered/second"), "answered.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "(row 90) unseats") != NULL);
  ll_run_close(r);

  mkdirs("torn");
  decided_then(path("torn/first"), "torn.json",
               "{\"seq\":90,\"record\":\"outc");
  r = fw_open(&w, path("torn/second"), "torn.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "ended without a decision") != NULL);
  ll_run_close(r);

  mkdirs("noted");
  decided_then(path("noted/first"), "noted.json",
               "{\"seq\":90,\"record\":\"note\",\"step\":\"after\"}\n");
  r = fw_open(&w, path("noted/second"), "noted.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* A bundle whose manifest.json is gone is judged by its ledger's first
 * row, the manifest row; one whose blob neither names blocks every run
 * beside it, since it may be on this blob. */
static void test_manifest_gone(void) {
  ll_error err = {0};
  fake_wire w;
  fw_init(&w);
  mkdirs("gone");
  doubtful_run(path("gone/first"), "gone.json", 0);
  CHECK_INT(unlink(path("gone/first/manifest.json")), 0);
  ll_run *r = fw_open(&w, path("gone/second"), "gone.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK_INT(err.code, LL_E_SCOPE);
  CHECK(strstr(err.message, "ended without a decision") != NULL);
  r = fw_open(&w, path("gone/other"), "other.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  /* a manifest.json that names no blob is not read either; nor is a FIFO,
   * which the scan must not wait on */
  FILE *m = fopen(path("gone/first/manifest.json"), "w");
  CHECK(m != NULL);
  if (m) {
    fputs("{}\n", m);
    fclose(m);
  }
  r = fw_open(&w, path("gone/second"), "gone.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "ended without a decision") != NULL);
  CHECK_INT(unlink(path("gone/first/manifest.json")), 0);
  CHECK_INT(mkfifo(path("gone/first/manifest.json"), 0600), 0);
  r = fw_open(&w, path("gone/second"), "gone.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "ended without a decision") != NULL);
  /* its ledger's first row unreadable too: blocks whatever the blob */
  FILE *f = fopen(path("gone/first/export/ledger.jsonl"), "w");
  CHECK(f != NULL);
  if (f) {
    fputs("{\"seq\":1,\"record\":\"tor\n", f);
    fclose(f);
  }
  r = fw_open(&w, path("gone/third"), "third.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK(strstr(err.message, "names its blob in neither its manifest.json") !=
        NULL);
  CHECK(strstr(err.message, path("gone/first")) != NULL);
  CHECK_INT(w.requests, 0);
  /* a first line cut short: the process died writing the manifest row,
   * before any request; it blocks nothing */
  f = fopen(path("gone/first/export/ledger.jsonl"), "w");
  CHECK(f != NULL);
  if (f) {
    fputs("{\"seq\":1,\"record\":\"mani", f);
    fclose(f);
  }
  r = fw_open(&w, path("gone/fourth"), "gone.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* A multi-version parent (index.json beside a bundle per version) is
 * judged by its bundles: an unfinished one blocks a run beside the parent;
 * without index.json the folder is not looked into. */
static void test_index_parent(void) {
  ll_error err = {0};
  mkdirs("series/matrix");
  doubtful_run(path("series/matrix/2023-11-03"), "series.json", 0);
  fake_wire w;
  fw_init(&w);
  /* no index.json: the folder is not a bundle and not looked into */
  ll_run *r = fw_open(&w, path("series/fresh"), "series.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  char rm[600];
  snprintf(rm, sizeof rm, "rm -rf '%s'",
           path("series/fresh")); /* no decision */
  CHECK_INT(system(rm), 0);
  FILE *f = fopen(path("series/matrix/index.json"), "w");
  CHECK(f != NULL);
  if (f) {
    fputs("{\"format\":\"leaselua-index-v1\",\"runs\":[]}\n", f);
    fclose(f);
  }
  r = fw_open(&w, path("series/again"), "series.json", LOCKS, 0, &err);
  CHECK(r == NULL);
  CHECK_INT(err.code, LL_E_SCOPE);
  CHECK(strstr(err.message, path("series/matrix/2023-11-03, ended without")) !=
        NULL);
  char recover[600];
  snprintf(recover, sizeof recover, "--evidence %s)",
           path("series/matrix/2023-11-03"));
  CHECK(strstr(err.message, recover) != NULL);
  CHECK_INT(w.requests, 0);
  /* another blob beside it is not concerned */
  r = fw_open(&w, path("series/other"), "other.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  fw_cleanup(&w);
}

/* The scan never follows a link and reads no replay bundle. */
static void test_scan_skips(void) {
  ll_error err = {0};
  mkdirs("far");
  mkdirs("near");
  doubtful_run(path("far/unfinished"), "skip.json", 0);
  CHECK_INT(symlink(path("far/unfinished"), path("near/link")), 0);
  fake_wire w;
  fw_init(&w);
  ll_run *r = fw_open(&w, path("near/fresh"), "skip.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  if (!r)
    fprintf(stderr, "open near/fresh: %s\n", err.message);
  ll_run_close(r);
  /* a replay without a decision beside a live run on the same blob */
  ll_run_config cfg = {0};
  cJSON *man = fw_manifest();
  cfg.evidence_dir = path("near/replay");
  cfg.manifest = man;
  cfg.account_url = "http://127.0.0.1:9/devstoreaccount1";
  cfg.container = "lease-handoff-lab";
  cfg.blob = "replayed.json";
  cfg.transport = fw_transport(&w);
  cfg.clock = ll_clock_new_real();
  cfg.fixture_label = "emulator";
  ll_run *rp = ll_run_open(&cfg, &err);
  CHECK(rp != NULL);
  ll_run_close(rp);
  cJSON_Delete(man);
  r = fw_open(&w, path("near/live"), "replayed.json", LOCKS, 0, &err);
  CHECK(r != NULL);
  ll_run_close(r);
  fw_cleanup(&w);
}

static void test_lock_dir(void) {
  ll_lock *l = NULL;
  ll_error err = {0};
  const char *blob = "/devstoreaccount1/c/b.json";
  mkdirs("open-dir");
  CHECK_INT(chmod(path("open-dir"), 0777), 0);
  CHECK_INT(ll_lock_take(path("open-dir"), "127.0.0.1:9", blob, "ev", &l, &err),
            LL_E_IO);
  CHECK(strstr(err.message, "is not private to this user") != NULL);
  CHECK(l == NULL);
  mkdirs("real-dir");
  CHECK_INT(symlink(path("real-dir"), path("link-dir")), 0);
  CHECK_INT(ll_lock_take(path("link-dir"), "127.0.0.1:9", blob, "ev", &l, &err),
            LL_E_IO);
  CHECK(strstr(err.message, "not a link") != NULL);
  /* a new directory is made private */
  CHECK_INT(ll_lock_take(path("made"), "127.0.0.1:9", blob, "ev", &l, &err),
            LL_OK);
  struct stat sb;
  CHECK_INT(stat(path("made"), &sb), 0);
  CHECK_INT(sb.st_mode & 0777, 0700);
  /* held: a second take fails even in this process; host case is folded */
  ll_lock *again = NULL;
  CHECK_INT(
      ll_lock_take(path("made"), "127.0.0.1:9", blob, "ev2", &again, &err),
      LL_E_SCOPE);
  CHECK_INT(ll_lock_take(path("made"), "LAB.blob.core.windows.net", blob, "x",
                         &again, &err),
            LL_OK);
  ll_lock *upper = NULL;
  CHECK_INT(ll_lock_take(path("made"), "lab.BLOB.core.windows.net", blob, "y",
                         &upper, &err),
            LL_E_SCOPE);
  /* one server, however spelt (helper-30): localhost is 127.0.0.1, and
   * an explicit :443 is no port */
  ll_lock *other = NULL;
  CHECK_INT(
      ll_lock_take(path("made"), "localhost:9", blob, "ev4", &other, &err),
      LL_E_SCOPE);
  CHECK_INT(ll_lock_take(path("made"), "lab.blob.core.windows.net:443", blob,
                         "z", &other, &err),
            LL_E_SCOPE);
  CHECK(other == NULL);
  ll_lock_release(again);
  ll_lock_release(l);
  CHECK_INT(ll_lock_take(path("made"), "127.0.0.1:9", blob, "ev3", &l, &err),
            LL_OK);
  ll_lock_release(l);
  ll_lock_release(NULL);
  /* a release leaves no file behind */
  char cmd[700];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", path("made"));
  CHECK_INT(system(cmd), 0);
  /* a lock file that is a link is never followed */
  mkdirs("linked");
  CHECK_INT(chmod(path("linked"), 0700), 0);
  CHECK_INT(ll_lock_take(path("linked"), "h", "/p", "ev", &l, &err), LL_OK);
  char lockname[600] = "";
  snprintf(cmd, sizeof cmd, "ls '%s'", path("linked"));
  FILE *ls = popen(cmd, "r");
  CHECK(ls && fgets(lockname, sizeof lockname, ls) != NULL);
  if (ls)
    pclose(ls);
  lockname[strcspn(lockname, "\n")] = '\0';
  ll_lock_release(l);
  char target[700];
  snprintf(target, sizeof target, "%s/%s", path("linked"), lockname);
  CHECK_INT(symlink(path("elsewhere"), target), 0);
  CHECK_INT(ll_lock_take(path("linked"), "h", "/p", "ev", &l, &err), LL_E_IO);
  CHECK(strstr(err.message, "cannot use the lock file") != NULL);
  CHECK(access(path("elsewhere"), F_OK) != 0);
}

static void test_root_bound(void) {
  ll_error err = {0};
  mkdirs("crowded");
  char name[600];
  for (int i = 0; i <= LL_LOCK_SCAN_MAX; i++) {
    snprintf(name, sizeof name, "%s/f%05d", path("crowded"), i);
    int fd = open(name, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0)
      close(fd);
  }
  CHECK_INT(ll_lock_check_previous(path("crowded/ev"), "127.0.0.1:9",
                                   "/devstoreaccount1/c/b.json", &err),
            LL_E_SCOPE);
  CHECK(strstr(err.message, "holds more than 10000 entries") != NULL);
  CHECK_INT(ll_lock_check_previous(path("missing-root/ev"), "127.0.0.1:9",
                                   "/devstoreaccount1/c/b.json", &err),
            LL_OK);
}

int main(void) {
  root = ll_test_tmpdir();
  if (!root)
    return 1;
  test_second_open_refused();
  test_previous_run();
  test_decision_unseated();
  test_manifest_gone();
  test_scan_skips();
  test_index_parent();
  test_lock_dir();
  test_root_bound();
  ll_test_rmtree(root);
  free(root);
  return ll_test_report("test_lock");
}
