/* An intent with no outcome (the process never saw the answer) is an open
 * doubt: a decision folded over it is HOLD, never ACCEPT, wherever the
 * intent sits and whatever follows it. A read left open changes nothing
 * on the blob and is not a doubt of its own. */
#include "decide.h"
#include "ll_rows.h"
#include "ll_scenario.h"
#include "model.h"
#include "testlib.h"

#define OPEN F_NO_OUTCOME

static const scenario scenarios[] = {
    /* the control: the full chain is ACCEPT */
    {"accept: the full chain, every intent answered",
     &LL_AZURE,
     {CHAIN_FULL},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
    {"hold: B's Put left open after the chain completed",
     &LL_AZURE,
     {CHAIN_FULL, PUTM("B", 5, 0, NULL, OPEN)},
     "HOLD",
     "(Put Blob by B): intent without an outcome",
     "REPRODUCED",
     "record",
     "intent",
     NULL},
    {"hold: A's stale Put left open in the middle of the chain",
     &LL_AZURE,
     {AFTER_BROKEN, PUTF("A", 4, 0, NULL, OPEN), CHAIN_B, CHAIN_END},
     "HOLD",
     "(Put Blob by A): intent without an outcome",
     "REPRODUCED",
     NOMARK},
    {"hold: a lease break left open before the chain went on",
     &LL_AZURE,
     {CHAIN_TO_BROKEN,
      CHAIN_BROKEN,
      {S_BREAK, NULL, 0, 0, NULL, OPEN, 0},
      CHAIN_STALE,
      CHAIN_B,
      CHAIN_END},
     "HOLD",
     "(Lease Break by operator): intent without an outcome",
     "REPRODUCED",
     NOMARK},
    {"hold: a release left open after the chain",
     &LL_AZURE,
     {CHAIN_FULL, {S_RELEASE, "B", 0, 0, NULL, OPEN, 0}},
     "HOLD",
     "(Lease Release by B): intent without an outcome",
     "REPRODUCED",
     NOMARK},
    /* a read changes nothing: left open, it is no doubt */
    {"accept: a properties read left open changes nothing",
     &LL_AZURE,
     {CHAIN_FULL, PROPSF("leased", "locked", OPEN)},
     "ACCEPT",
     NULL,
     "REPRODUCED",
     NOMARK},
};

int main(void) {
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
    run_scenario(&scenarios[i]);
    /* the decision row's open_doubts counts the open mutation (the lock
     * reads it): one for each HOLD here, none for an open read */
    ll_rb b;
    rb_init(&b, scenarios[i].prof, 1);
    (void)rb_run(&b, scenarios[i].steps); /* the marked row is the builder's */
    int hold = strcmp(scenarios[i].decision, "HOLD") == 0;
    CHECK_INT(ll_decide_open_doubts(b.m), hold);
    rb_free(&b);
  }
  return ll_test_report("test_decide_open");
}
