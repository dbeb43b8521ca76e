/* What each ll_sync value asks of the files: which it fsyncs, whether its
 * export line waits, that a row that does not wait takes what waits with
 * it, the message of a failed combined write, and that a value outside
 * the enum is refused before anything is written. fsync is interposed (the
 * core is linked statically into this executable) to count calls per
 * file. (From the review of LL_SYNC_DEFER.) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ledger_fixture.h"
#include "testlib.h"

static int fsyncs_prot, fsyncs_exp, fsyncs_other;
static char prot_path[4096], exp_path[4096];

static int same_file(int fd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

int fsync(int fd) {
  if (prot_path[0] && same_file(fd, prot_path))
    fsyncs_prot++;
  else if (exp_path[0] && same_file(fd, exp_path))
    fsyncs_exp++;
  else
    fsyncs_other++;
  return (int)syscall(SYS_fsync, fd);
}

static const char *const intent =
    "{\"record\":\"intent\",\"event_id\":\"e0001\",\"http_method\":\"GET\"}";
static const char *const note = "{\"record\":\"note\",\"text\":\"x\"}";

static ll_ledger *fresh(const char *root, const char *name) {
  char dir[2048];
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  ll_error err = {0};
  ll_ledger *l = ll_ledger_open(dir, LL_LEDGER_CREATE, &err);
  snprintf(prot_path, sizeof prot_path, "%s/protected/ledger.jsonl", dir);
  snprintf(exp_path, sizeof exp_path, "%s/export/ledger.jsonl", dir);
  return l;
}

struct want {
  ll_sync sync;
  int prot, exp;   /* fsyncs of each file by the one append */
  int exp_written; /* the export line is in the file after the append */
};

/* Each value, alone on a fresh ledger (after one settled row). */
static void test_each_value(const char *root) {
  static const struct want w[] = {
      {LL_SYNC_BOTH, 1, 1, 1},
      {LL_SYNC_PROTECTED, 1, 0, 1},
      {LL_SYNC_NONE, 0, 0, 1},
      {LL_SYNC_DEFER, 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof w / sizeof *w; i++) {
    char name[32];
    snprintf(name, sizeof name, "each%zu", i);
    ll_ledger *l = fresh(root, name);
    CHECK(l != NULL);
    if (!l)
      return;
    ll_error err = {0};
    CHECK_INT(append_row_text(l, note, LL_SYNC_NONE, &err), LL_OK);
    long e0 = lines_in(exp_path);
    fsyncs_prot = fsyncs_exp = 0;
    CHECK_INT(append_row_text(l, intent, w[i].sync, &err), LL_OK);
    CHECK_INT(fsyncs_prot, w[i].prot);
    CHECK_INT(fsyncs_exp, w[i].exp);
    CHECK_INT(lines_in(exp_path) - e0, w[i].exp_written);
    ll_ledger_close(l);
  }
}

/* Every non-deferring value takes what waits with it, in order. */
static void test_takes_what_waits(const char *root) {
  static const ll_sync takers[] = {LL_SYNC_BOTH, LL_SYNC_PROTECTED,
                                   LL_SYNC_NONE};
  for (size_t i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "takes%zu", i);
    ll_ledger *l = fresh(root, name);
    CHECK(l != NULL);
    if (!l)
      return;
    ll_error err = {0};
    CHECK_INT(append_row_text(l, intent, LL_SYNC_DEFER, &err), LL_OK);
    CHECK_INT(append_row_text(l, intent, LL_SYNC_DEFER, &err), LL_OK);
    CHECK_INT(lines_in(exp_path), 0);
    CHECK_INT(append_row_text(l, note, takers[i], &err), LL_OK);
    CHECK_INT(lines_in(exp_path), 3);
    CHECK_INT(lines_in(prot_path), 3);
    ll_ledger_close(l);
  }
}

/* A non-deferred row whose export write (what waited, then its line)
 * fails: its reason ends in "nothing was sent" (this row was not acted
 * on), its protected line is taken back, the next append is refused. */
static void test_failed_combined_write(const char *root) {
  ll_ledger *l = fresh(root, "combined");
  CHECK(l != NULL);
  if (!l)
    return;
  ll_error err = {0};
  CHECK_INT(append_row_text(l, note, LL_SYNC_BOTH, &err), LL_OK);
  ll_ledger_close(l);
  fflush(NULL);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int code = 0;
    signal(SIGXFSZ, SIG_IGN);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/combined", root);
    ll_ledger *c = ll_ledger_open(dir, LL_LEDGER_RECOVER, &err);
    if (!c)
      _exit(100);
    if (append_row_text(c, intent, LL_SYNC_DEFER, &err) != LL_OK)
      code |= 1;
    long esize = file_size(exp_path), psize = file_size(prot_path);
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = (rlim_t)(esize > psize ? esize : psize) + 40;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
      _exit(102);
    ll_error e2 = {0};
    if (append_row_text(c, note, LL_SYNC_NONE, &e2) != LL_E_DURABILITY)
      code |= 2;
    if (!strstr(e2.message, "short write") ||
        !strstr(e2.message, ": nothing was sent"))
      code |= 4;
    if (file_size(prot_path) != psize || file_size(exp_path) != esize)
      code |= 8;
    if (append_row_text(c, note, LL_SYNC_NONE, &e2) != LL_E_DURABILITY ||
        !strstr(e2.message, "earlier durability failure: nothing was sent"))
      code |= 16;
    ll_ledger_close(c);
    _exit(code);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK_INT(WEXITSTATUS(status), 0);
}

/* An ll_sync outside the enum means nothing: refused (LL_E_USAGE) before
 * a byte is written, never appended as if it were one of the four. */
static void test_unknown_value(const char *root) {
  static const int bad[] = {4, 7, -1};
  for (size_t i = 0; i < 3; i++) {
    char name[32];
    snprintf(name, sizeof name, "unknown%zu", i);
    ll_ledger *l = fresh(root, name);
    CHECK(l != NULL);
    if (!l)
      return;
    ll_error err = {0};
    fsyncs_prot = 0;
    CHECK_INT(append_row_text(l, intent, (ll_sync)bad[i], &err), LL_E_USAGE);
    CHECK(strstr(err.message, "sync") != NULL);
    CHECK_INT(lines_in(prot_path), 0);
    CHECK_INT(lines_in(exp_path), 0);
    CHECK_INT(ll_ledger_count(l), 0);
    /* and the ledger is still usable: nothing was written */
    CHECK_INT(append_row_text(l, intent, LL_SYNC_NONE, &err), LL_OK);
    ll_ledger_close(l);
  }
}

int main(void) {
  char *root = ll_test_tmpdir();
  CHECK(root != NULL);
  if (!root)
    return ll_test_report("test_ledger_sync");
  test_each_value(root);
  test_takes_what_waits(root);
  test_failed_combined_write(root);
  test_unknown_value(root);
  CHECK(remove_tree(root) == 0);
  free(root);
  return ll_test_report("test_ledger_sync");
}
