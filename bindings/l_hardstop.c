/* The hard stop (l_hardstop.h). The deadline hook (l_run.c) raises at
 * every Lua instruction once the run's deadline and its grace have
 * passed, but a hook never fires inside a C function: a backtracking
 * string.find ran 12 s past a 1 s deadline, and longer patterns run for
 * hours (helper-30). No request can leave then (the core checks the
 * deadline), yet the process would never end. SIGALRM ends it, with only
 * async-signal-safe calls: the line is formatted when armed. Dying here
 * is what the operator's kill would do; the ledger's rows are whole
 * (each is one write), and the recovery reads the run as interrupted. */
#include "l_hardstop.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"

static char line[1400];
static volatile sig_atomic_t line_len;
static char dir[900];
static unsigned armed_s;

static void on_alarm(int sig) {
  (void)sig;
  if (line_len > 0 && write(STDERR_FILENO, line, (size_t)line_len) < 0)
    line_len = 0; /* nothing more can be said */
  _exit(LL_HARD_STOP_EXIT);
}

unsigned ll_hard_stop_seconds(const ll_operator *op) {
  int fetched = op->auth_kind != LL_AUTH_NONE &&
                op->auth_kind != LL_AUTH_TOKEN_ENV &&
                op->auth_kind != LL_AUTH_TOKEN_FILE;
  fetched |= op->cred_a[0] || op->cred_b[0] || op->cred_operator[0] ||
             op->cred_observer[0];
  long ms = LL_HOST_DEADLINE_GRACE_MS + op->total_timeout_ms + 5000 +
            (fetched ? LL_AUTH_COMMAND_TIMEOUT_MS : 0);
  return (unsigned)op->deadline_s + (unsigned)((ms + 999) / 1000);
}

/* The line the handler writes; said while the handler cannot read it. */
static void say(const char *decision) {
  line_len = 0;
  int n;
  if (decision)
    n = snprintf(line, sizeof line,
                 "leaselua: LL_E_SCOPE: the script is still running %u s "
                 "after its run opened, inside a call no hook reaches, "
                 "after the run recorded its decision (%s): the process "
                 "stops here (exit %d, not the decision's: the host did not "
                 "close or sign the run; leaselua verify %s reads the "
                 "decision)\n",
                 armed_s, decision, LL_HARD_STOP_EXIT, dir);
  else
    n = snprintf(line, sizeof line,
                 "leaselua: LL_E_SCOPE: the script is still running %u s "
                 "after its run opened (the run's deadline, its grace and "
                 "any request's own time are past), inside a call no hook "
                 "reaches: the process stops here, the run undecided and "
                 "the blob as it is (exit %d); run scripts/recovery.lua "
                 "--recover --evidence %s\n",
                 armed_s, LL_HARD_STOP_EXIT, dir);
  line_len = n < 0 ? 0 : n >= (int)sizeof line ? (int)sizeof line - 1 : n;
}

void ll_hard_stop_arm(unsigned seconds, const char *evidence_dir) {
  armed_s = seconds;
  snprintf(dir, sizeof dir, "%s", evidence_dir);
  say(NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL) == 0)
    alarm(seconds);
}

void ll_hard_stop_decided(const char *decision) {
  if (armed_s)
    say(decision ? decision : "?");
}

void ll_hard_stop_disarm(void) {
  alarm(0);
  armed_s = 0;
}
