/* The token command without a shell: core/base/proc.c (argv, capped stdout,
 * timeout, reaping, no inherited descriptors), the one-string splitter,
 * and the command as a credential source, traced with strace when it is
 * there to show that only the intended program is executed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth_fixture.h"
#include "auth_impl.h"
#include "proc.h"
#include "testlib.h"

static char marker[600];

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child is gone for good: not running, not a zombie. */
static void check_reaped(long pid) {
  int status;
  CHECK(pid > 0);
  CHECK(waitpid((pid_t)pid, &status, WNOHANG) == -1 && errno == ECHILD);
  CHECK(kill((pid_t)pid, 0) == -1 && errno == ESRCH);
}

static void test_proc_table(void) {
  enum { OK_EXIT, TIMEOUT, OVERFLOW };
  static const struct {
    const char *argv[8];
    long timeout_ms;
    int how;
    int exit_code;
    const char *out; /* NULL: no output kept */
  } rows[] = {
      {{"printf", "%s", "a-token", NULL}, 5000, OK_EXIT, 0, "a-token"},
      {{"true", NULL}, 5000, OK_EXIT, 0, ""},
      {{"false", NULL}, 5000, OK_EXIT, 1, ""},
      {{"sh", "-c", "printf partial; exit 7", NULL},
       5000,
       OK_EXIT,
       7,
       "partial"},
      /* stdin is /dev/null, not ours */
      {{"readlink", "/proc/self/fd/0", NULL}, 5000, OK_EXIT, 0, "/dev/null\n"},
      /* shell text in an argument reaches the program as it is */
      {{"printf", "%s", "a;b $(touch M) `touch M` | tee M & x > M", NULL},
       5000,
       OK_EXIT,
       0,
       "a;b $(touch M) `touch M` | tee M & x > M"},
      {{"sleep", "30", NULL}, 300, TIMEOUT, 0, NULL},
      /* stdout closed but the child lives on: still killed at the deadline */
      {{"sh", "-c", "exec >&-; exec sleep 30", NULL}, 300, TIMEOUT, 0, NULL},
      {{"head", "-c", "70000", "/dev/zero", NULL}, 5000, OVERFLOW, 0, NULL},
      /* over the cap and never stops: killed, not waited for */
      {{"yes", NULL}, 5000, OVERFLOW, 0, NULL},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_proc_options o = {.argv = rows[i].argv,
                         .out_cap = 64 * 1024,
                         .timeout_ms = rows[i].timeout_ms};
    ll_proc_result r;
    ll_error err = {0};
    int64_t t0 = mono_ms();
    ll_status st = ll_proc_capture(&o, &r, &err);
    int64_t took = mono_ms() - t0;
    if (st != LL_OK)
      fprintf(stderr, "proc row %zu: %s\n", i, err.message);
    CHECK_INT(st, LL_OK);
    CHECK_INT(r.timed_out, rows[i].how == TIMEOUT);
    CHECK_INT(r.overflow, rows[i].how == OVERFLOW);
    if (rows[i].how == OK_EXIT) {
      CHECK_INT(r.exited, 1);
      CHECK_INT(r.exit_code, rows[i].exit_code);
      CHECK_STR(r.out, rows[i].out);
      CHECK_INT(r.out_len, strlen(rows[i].out));
    } else {
      CHECK(r.out == NULL);
      CHECK_INT(r.out_len, 0);
    }
    /* head may finish its 70000 bytes before the kill lands; the others
     * never stop on their own */
    if (rows[i].how != OK_EXIT && strcmp(rows[i].argv[0], "head") != 0)
      CHECK_INT(r.term_signal, SIGKILL);
    if (rows[i].how == TIMEOUT)
      CHECK(took >= rows[i].timeout_ms && took < 5000);
    check_reaped(r.pid);
    ll_proc_result_cleanup(&r);
    CHECK(r.out == NULL);
  }
  CHECK(access("M", F_OK) != 0);
}

static void test_proc_refusals(void) {
  static const char *const empty[] = {NULL};
  static const char *const blank[] = {"", NULL};
  static const char *const missing[] = {"leaselua-no-such-program-4711", NULL};
  static const struct {
    const char *const *argv;
    ll_code code;
    const char *want;
  } rows[] = {
      {NULL, LL_E_USAGE, "empty argv"},
      {empty, LL_E_USAGE, "empty argv"},
      {blank, LL_E_USAGE, "empty argv"},
      {missing, LL_E_IO, "cannot start leaselua-no-such-program-4711"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_proc_options o = {
        .argv = rows[i].argv, .out_cap = 1024, .timeout_ms = 1000};
    ll_proc_result r;
    ll_error err = {0};
    CHECK_STR(ll_code_name(ll_proc_capture(&o, &r, &err)),
              ll_code_name(rows[i].code));
    CHECK(strstr(err.message, rows[i].want) != NULL);
    CHECK(r.out == NULL && r.pid == 0);
  }
}

/* A descriptor opened without O_CLOEXEC (as a library might) is closed in
 * the child all the same. */
static void test_proc_no_inherited_fd(void) {
  int fd = open("/dev/null", O_RDONLY);
  CHECK(fd > 2);
  char script[64];
  snprintf(script, sizeof script, "[ -e /proc/self/fd/%d ] && echo open", fd);
  const char *argv[] = {"sh", "-c", script, NULL};
  ll_proc_options o = {.argv = argv, .out_cap = 1024, .timeout_ms = 5000};
  ll_proc_result r;
  ll_error err = {0};
  CHECK_INT(ll_proc_capture(&o, &r, &err), LL_OK);
  CHECK_STR(r.out, "");
  CHECK_INT(r.exit_code, 1); /* the test failed: no such descriptor */
  ll_proc_result_cleanup(&r);
  close(fd);
}

static void test_split(void) {
  static const struct {
    const char *line;
    ll_code code;
    const char *words[12];
  } rows[] = {
      {"az account get-access-token --resource https://storage.azure.com/ "
       "--query accessToken -o tsv",
       LL_OK,
       {"az", "account", "get-access-token", "--resource",
        "https://storage.azure.com/", "--query", "accessToken", "-o", "tsv",
        NULL}},
      {"  one\t two  ", LL_OK, {"one", "two", NULL}},
      {"printf %s$(touch x);`y`|z&w>v",
       LL_OK,
       {"printf", "%s$(touch", "x);`y`|z&w>v", NULL}},
      {"echo $HOME *", LL_OK, {"echo", "$HOME", "*", NULL}},
      {"", LL_E_USAGE, {NULL}},
      {" \t ", LL_E_USAGE, {NULL}},
      {"az 'account'", LL_E_USAGE, {NULL}},
      {"az \"account\"", LL_E_USAGE, {NULL}},
      {"az acc\\ ount", LL_E_USAGE, {NULL}},
      {"az\naccount", LL_E_USAGE, {NULL}},
      {"az\raccount", LL_E_USAGE, {NULL}},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char **argv = (char **)&argv; /* must be reset to NULL on failure */
    ll_error err = {0};
    ll_status st = ll_auth_split_command(rows[i].line, &argv, &err);
    CHECK_STR(ll_code_name(st), ll_code_name(rows[i].code));
    if (st != LL_OK) {
      CHECK(argv == NULL);
      CHECK(err.message[0] != '\0' && strchr(err.message, '\n') == NULL);
      continue;
    }
    size_t n = 0;
    for (; rows[i].words[n]; n++)
      CHECK_STR(argv[n], rows[i].words[n]);
    CHECK(argv[n] == NULL);
    free(argv);
  }
  char many[400] = "", big[4200];
  for (int i = 0; i < 65; i++)
    strcat(many, "w ");
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  char **argv = NULL;
  CHECK_INT(ll_auth_split_command(many, &argv, NULL), LL_E_USAGE);
  CHECK_INT(ll_auth_split_command(big, &argv, NULL), LL_E_USAGE);
  many[64 * 2] = '\0'; /* exactly 64 words is fine */
  CHECK_INT(ll_auth_split_command(many, &argv, NULL), LL_OK);
  free(argv);
}

/* The token command as a credential, each refusal one line with no
 * command output in it. */
static void test_token_command(ll_clock *c) {
  char *tok = keep(ll_auth_dev_token(now_s(), 3600));
  add_secret("command-output-secret-88");
  const char *ok[] = {"printf", "%s\n", tok, NULL};
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_COMMAND, .token_argv = ok};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);

  static const struct {
    const char *argv[6];
    long timeout_ms;
    ll_code code;
    const char *want;
  } rows[] = {
      {{"true", NULL}, 0, LL_E_AUTH, "no output"},
      {{"false", NULL}, 0, LL_E_AUTH, "token command failed (exit 1)"},
      {{"sh", "-c", "printf command-output-secret-88; exit 1", NULL},
       0,
       LL_E_AUTH,
       "exit 1"},
      {{"sleep", "30", NULL}, 300, LL_E_AUTH, "did not finish within 300 ms"},
      {{"head", "-c", "70000", "/dev/zero", NULL}, 0, LL_E_AUTH, "64 KiB"},
      {{"leaselua-no-such-program-4711", NULL},
       0,
       LL_E_AUTH,
       "runs without a shell"},
      {{"printf", "command-output-secret-88", NULL}, 0, LL_E_AUTH, "not a JWT"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ll_auth_options ro = {.kind = LL_AUTH_TOKEN_COMMAND,
                          .token_argv = rows[i].argv,
                          .token_command_timeout_ms = rows[i].timeout_ms};
    err = expect_fail(&ro, c, 0, rows[i].code);
    if (!strstr(err.message, rows[i].want))
      fprintf(stderr, "command row %zu: %s\n", i, err.message);
    CHECK(strstr(err.message, rows[i].want) != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
  }
  /* The one-string form splits without a shell. */
  char line[4200];
  snprintf(line, sizeof line, "printf %%s %s", tok);
  o = (ll_auth_options){.kind = LL_AUTH_TOKEN_COMMAND, .token_command = line};
  a = ll_auth_new(&o, c, 0, &err);
  CHECK(a != NULL);
  CHECK_STR(ll_auth_secret(a, 0), tok);
  ll_auth_free(a);
  o.token_argv = ok; /* both forms at once */
  expect_fail(&o, c, 0, LL_E_USAGE);
  o = (ll_auth_options){.kind = LL_AUTH_TOKEN_COMMAND,
                        .token_command = "printf 'quoted'"};
  err = expect_fail(&o, c, 0, LL_E_USAGE);
  CHECK(strstr(err.message, "without a shell") != NULL);
}

/* Run by the strace test: one token command full of shell syntax. */
static int token_child(void) {
  clear_credential_env();
  ll_clock *c = ll_clock_new_real();
  char *tok = ll_auth_dev_token(now_s(), 3600);
  char line[4200];
  snprintf(line, sizeof line, "printf %%s %s;$(id)|`id`&&id", tok);
  ll_auth_options o = {.kind = LL_AUTH_TOKEN_COMMAND, .token_command = line};
  ll_error err = {0};
  ll_auth *a = ll_auth_new(&o, c, 0, &err);
  int rc = a ? 0 : 3;
  ll_auth_free(a);
  free(tok);
  ll_clock_free(c);
  return rc;
}

/* strace -f -e trace=execve over a token fetch: exactly two programs ran,
 * this test and printf; no shell and no id. Skipped without strace. */
static void test_strace(const char *dir) {
  if (access("/usr/bin/strace", X_OK) != 0) {
    fprintf(stderr, "strace test skipped: /usr/bin/strace missing\n");
    return;
  }
  char self[512], log[700];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  CHECK(n > 0);
  if (n <= 0)
    return;
  self[n] = '\0';
  snprintf(log, sizeof log, "%s/execve.log", dir);
  /* LeakSanitizer cannot run under ptrace: the traced child of an ASan
   * build checks no leaks (the untraced runs of this test do). */
  const char *asan = getenv("ASAN_OPTIONS");
  char opts[512];
  snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "",
           asan && *asan ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
  const char *argv[] = {"/usr/bin/strace", "-f", "-qq", "-e",
                        "trace=execve",    "-o", log,   self,
                        "--token-child",   NULL};
  ll_proc_options o = {.argv = argv, .out_cap = 64 * 1024, .timeout_ms = 20000};
  ll_proc_result r;
  ll_error err = {0};
  CHECK_INT(ll_proc_capture(&o, &r, &err), LL_OK);
  CHECK_INT(r.exit_code, 0);
  ll_proc_result_cleanup(&r);
  FILE *f = fopen(log, "r");
  CHECK(f != NULL);
  if (!f)
    return;
  char line[8192];
  int ran = 0, self_ran = 0, printf_ran = 0, other = 0;
  while (fgets(line, sizeof line, f)) {
    if (!strstr(line, "execve(") || !strstr(line, ") = 0"))
      continue; /* the PATH search's failed attempts */
    ran++;
    char *q = strchr(line, '"'), *e = q ? strchr(q + 1, '"') : NULL;
    if (!q || !e)
      continue;
    *e = '\0';
    const char *prog = q + 1, *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    if (strcmp(prog, self) == 0)
      self_ran++;
    else if (strcmp(base, "printf") == 0)
      printf_ran++;
    else {
      other++;
      fprintf(stderr, "strace: unexpected program executed: %s\n", prog);
    }
  }
  fclose(f);
  fprintf(stderr, "strace: %d programs executed\n", ran);
  CHECK_INT(ran, 2);
  CHECK_INT(self_ran, 1);
  CHECK_INT(printf_ran, 1);
  CHECK_INT(other, 0);
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--token-child") == 0)
    return token_child();
  clear_credential_env();
  char *dir = ll_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir)
    return ll_test_report("test_auth_command");
  CHECK(chdir(dir) == 0); /* the table's "touch M" would land here */
  snprintf(marker, sizeof marker, "%s/M", dir);
  ll_clock *c = ll_clock_new_real();

  test_proc_table();
  test_proc_refusals();
  test_proc_no_inherited_fd();
  test_split();
  test_token_command(c);
  test_strace(dir);
  CHECK(access(marker, F_OK) != 0);

  const char *rm[] = {"rm", "-rf", dir, NULL};
  ll_proc_options o = {.argv = rm, .out_cap = 1024, .timeout_ms = 10000};
  ll_proc_result r;
  CHECK(chdir("/") == 0);
  CHECK_INT(ll_proc_capture(&o, &r, NULL), LL_OK);
  CHECK_INT(r.exit_code, 0);
  ll_proc_result_cleanup(&r);
  free(dir);
  free_kept();
  ll_clock_free(c);
  return ll_test_report("test_auth_command");
}
