/* What the host knows about the one run its script opens, kept in C where
 * the script cannot reach it: the operator's configuration, the run's
 * handle while it is open, and the decision it recorded. The exit code is
 * computed from this, never from what the script returns. */
#ifndef LL_L_HOST_H
#define LL_L_HOST_H

#include <lua.h>

#include "fixture.h"
#include "operator.h"

struct l_run;

typedef struct {
  const ll_operator *op;  /* borrowed; outlives the lua_State */
  int opened;             /* leaselua.open was called (once at most) */
  struct l_run *handle;   /* the open run, NULL once closed */
  int decision;           /* the recorded ll_decision, -1 none */
  int stop_exit;          /* invariant 15's target_stop: 64 or 2, else 0 */
  int replay_failed;      /* a strict replay diverged (exit 64) */
  int help;               /* the script printed its usage (leaselua.help) */
  int ended;              /* the script's run was ended by the host: the
                             exit code is fixed, nothing more is opened */
  int decided_at_error;   /* the script's error was raised with the run's
                             decision already recorded (host.c's message
                             handler, before any <close> variable runs) */
  char label[16];         /* replay: the fixture's endpoint kind */
  char evidence_dir[512]; /* the opened run's bundle: signed at the end */
  char flow_name[64];     /* the opened run's plan name (an index's flow) */
  char sign_key_fp[128];  /* --sign-key's "TYPE key SHA256:...", or "" */
  /* the flow's script file name and own arguments, as given: a recording
   * writes them into its header; in a replay, recorded: the fixture's
   * (has_flow 0 when it has none for this script), for lib.cli */
  const ll_fixture_context *flow, *recorded;
  ll_error config_error; /* the operator's configuration is incomplete:
                            the script may still print --help, but
                            leaselua.open raises this */
} ll_host;

/* Installs h for the sandbox's leaselua.open; the stock module has none. */
void ll_lua_host_install(lua_State *L, ll_host *h);
/* The host state, or NULL under the stock-Lua module. */
ll_host *ll_lua_host(lua_State *L);
/* The exit code of a recorded decision (an ll_decision): 0 ACCEPT, 1 WAIT,
 * 2 HOLD, 3 RECONCILE; a run stopped by invariant 15 exits as its
 * target_stop says (stop_exit 64 or 2; 0 when it did not stop). */
int ll_lua_host_exit(int decision, int stop_exit);

#endif
