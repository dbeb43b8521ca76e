/* The host's last stop for a script that its deadline hook cannot reach
 * (l_hardstop.c). */
#ifndef LL_L_HARDSTOP_H
#define LL_L_HARDSTOP_H

#include "operator.h"

/* How long after the run's deadline the deadline hook (l_run.c) waits
 * before it raises at every Lua instruction. */
#define LL_HOST_DEADLINE_GRACE_MS 5000

/* What the process exits with when the hard stop ends it: the run has no
 * decision, as when it could not record one. */
#define LL_HARD_STOP_EXIT 70

/* How long after the run's open the hard stop waits: the operator's
 * --deadline-s, the deadline hook's grace (LL_HOST_DEADLINE_GRACE_MS),
 * then the longest a request admitted just before the deadline can still
 * take (a credential command's or identity endpoint's
 * LL_AUTH_COMMAND_TIMEOUT_MS when the operator's credentials need one,
 * and --timeout-ms), and 5 s more. By then nothing of leaselua's own is
 * still under way for the run. */
unsigned ll_hard_stop_seconds(const ll_operator *op);

/* Arms the hard stop: if the run is still open that many seconds from now,
 * the process writes one line to stderr naming the evidence directory and
 * the recovery to run, and exits LL_HARD_STOP_EXIT at once, leaving the
 * run undecided and the blob as it is (a script stuck inside a library
 * call, where no count hook fires, cannot keep the process alive). */
void ll_hard_stop_arm(unsigned seconds, const char *evidence_dir);
/* The run recorded its decision: the line then says so (the exit is
 * still LL_HARD_STOP_EXIT, never the decision's: the host did not close
 * or sign the run). */
void ll_hard_stop_decided(const char *decision);
/* Disarms it: the run was closed. */
void ll_hard_stop_disarm(void);

#endif
