/* The export's waiting lines (LL_SYNC_DEFER): the protected line is
 * written by the append, the export line waits until a flush, a row
 * synced in both files, a row that does not wait, or the close; a killed
 * process leaves a shorter export that a recovery completes; a failed
 * flush takes back its part and the next append says why. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ledger_fixture.h"
#include "testlib.h"

static const char *const intent =
    "{\"record\":\"intent\",\"event_id\":\"e0001\",\"http_method\":\"HEAD\"}";
static const char *const outcome =
    "{\"record\":\"outcome\",\"event_id\":\"e0001\",\"http_status\":200}";

static ll_ledger *fresh(const char *root, const char *name, char **pfile,
                        char **efile) {
  char *dir = path_of(root, name);
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  *pfile = path_of(dir, "protected/ledger.jsonl");
  *efile = path_of(dir, "export/ledger.jsonl");
  return l;
}

/* Waiting lines leave in one write, in order, at each kind of flush. */
static void test_waits_then_flushes(const char *root) {
  char *p, *e;
  ll_ledger *l = fresh(root, "wait", &p, &e);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(append_row_text(l, intent, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(lines_in(p), 2); /* the write-ahead record is never deferred */
  CHECK_INT(lines_in(e), 0);
  CHECK_INT(cJSON_GetArraySize(ll_ledger_export_rows(l)), 2);
  ll_error err = {0};
  CHECK_INT(ll_ledger_flush_export(l, &err), LL_OK);
  CHECK_INT(lines_in(e), 2);
  CHECK_INT(ll_ledger_flush_export(l, &err), LL_OK); /* nothing waits */
  CHECK_INT(lines_in(e), 2);

  /* A row synced in both files takes what waits with it. */
  CHECK_INT(append_row_text(l, intent, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(lines_in(e), 2);
  CHECK_INT(append_row_text(l, "{\"record\":\"decision\"}", LL_SYNC_BOTH, NULL),
            LL_OK);
  CHECK_INT(lines_in(e), 4);

  /* A row that does not wait writes what waits first. */
  CHECK_INT(append_row_text(l, outcome, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(append_row_text(l, "{\"record\":\"note\"}", LL_SYNC_NONE, NULL),
            LL_OK);
  CHECK_INT(lines_in(e), 6);

  /* The close writes what still waits. */
  CHECK_INT(append_row_text(l, intent, LL_SYNC_DEFER, NULL), LL_OK);
  CHECK_INT(lines_in(e), 6);
  ll_ledger_close(l);
  CHECK_INT(lines_in(e), 7);
  long rows = 0, bad = 0;
  CHECK_INT(verify(e, &rows, &bad), LL_OK);
  CHECK_INT(rows, 7);
  CHECK_INT(verify(p, &rows, &bad), LL_OK);
  CHECK_INT(rows, 7);
  /* and the files reopen as one ledger: the export is the protected one
   * sanitized, row for row */
  ll_error err2 = {0};
  l = ll_ledger_open(path_of(root, "wait"), LL_LEDGER_RECOVER, &err2);
  CHECK(l != NULL);
  CHECK_INT(ll_ledger_count(l), 7);
  ll_ledger_close(l);
}

/* A process killed with lines waiting: the export is shorter, and the
 * recovery re-derives what it lacks from the protected ledger. */
static void test_killed_then_recovered(const char *root) {
  char *p, *e;
  ll_ledger *l = fresh(root, "killed", &p, &e);
  CHECK(l != NULL);
  if (!l)
    return;
  ll_ledger_close(l);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    ll_error err = {0};
    ll_ledger *c =
        ll_ledger_open(path_of(root, "killed"), LL_LEDGER_RECOVER, &err);
    if (!c)
      _exit(100);
    int code = append_row_text(c, intent, LL_SYNC_DEFER, NULL) != LL_OK;
    code |= (append_row_text(c, outcome, LL_SYNC_DEFER, NULL) != LL_OK) << 1;
    kill(getpid(), SIGKILL); /* no flush, no close */
    _exit(code);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CHECK_INT(lines_in(p), 2);
  CHECK_INT(lines_in(e), 0);
  ll_error err = {0};
  l = ll_ledger_open(path_of(root, "killed"), LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(ll_ledger_count(l), 2);
  CHECK_INT(cJSON_GetArraySize(ll_ledger_export_rows(l)), 2);
  ll_ledger_close(l);
  long rows = 0, bad = 0;
  CHECK_INT(lines_in(e), 2);
  CHECK_INT(verify(e, &rows, &bad), LL_OK);
  CHECK_INT(rows, 2);
}

/* A flush the file size limit cuts short: its part is taken back, the
 * export still ends on a whole row, and the next append fails naming why.
 * Run from the transport's hook, which takes no error. */
static void test_failed_flush(const char *root) {
  char *p, *e;
  ll_ledger *l = fresh(root, "failed", &p, &e);
  CHECK(l != NULL);
  if (!l)
    return;
  CHECK_INT(append_row_text(l, intent, LL_SYNC_BOTH, NULL), LL_OK);
  ll_ledger_close(l);
  (void)p;
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int code = 0;
    ll_error err = {0};
    signal(SIGXFSZ, SIG_IGN);
    ll_ledger *c =
        ll_ledger_open(path_of(root, "failed"), LL_LEDGER_RECOVER, &err);
    if (!c)
      _exit(100);
    if (append_row_text(c, outcome, LL_SYNC_DEFER, NULL) != LL_OK)
      code |= 1;
    long esize = file_size(e);
    /* room for 7 bytes of the waiting line */
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = (rlim_t)(esize + 7);
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(102);
    if (ll_ledger_flush_hook(c) != -1) /* a short write: 7 bytes reach */
      code |= 16;
    if (file_size(e) != esize)
      code |= 2; /* taken back */
    if (append_row_text(c, intent, LL_SYNC_NONE, &err) != LL_E_DURABILITY ||
        !strstr(err.message, "its export could not be written") ||
        !strstr(err.message, "short write") ||
        strstr(err.message, "nothing was sent"))
      code |= 4;
    if (ll_ledger_flush_export(c, &err) != LL_OK)
      code |= 8; /* nothing waits any more: the failed lines were dropped */
    ll_ledger_close(c);
    _exit(code);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK_INT(WEXITSTATUS(status), 0);
  /* The outcome is in the protected ledger; the recovery re-derives its
   * export line. */
  ll_error err = {0};
  l = ll_ledger_open(path_of(root, "failed"), LL_LEDGER_RECOVER, &err);
  CHECK(l != NULL);
  CHECK_INT(ll_ledger_count(l), 2);
  ll_ledger_close(l);
  long rows = 0, bad = 0;
  CHECK_INT(verify(e, &rows, &bad), LL_OK);
  CHECK_INT(rows, 2);
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger_defer");
  test_waits_then_flushes(root);
  test_killed_then_recovered(root);
  test_failed_flush(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  free_paths();
  return ll_test_report("test_ledger_defer");
}
