/* The Run handle (leaselua.Run), shared by the files of its methods
 * (l_request.c, l_run_flow.c), and its end for the host. */
#ifndef LL_L_RUN_H
#define LL_L_RUN_H

#include <cjson/cJSON.h>
#include <lua.h>

#include "l_host.h"
#include "run.h"

typedef struct l_run {
  ll_run *run;   /* NULL once closed */
  ll_host *host; /* the host that owns this run, NULL under the stock module */
} l_run;

/* The open run at idx; raises LL_E_USAGE naming the method for another
 * value, LL_E_CLOSED for a closed run. */
l_run *ll_lua_check_run(lua_State *L, int idx);
/* Pushes row (and deletes it) for LL_OK; nil, err (err.row = row) for
 * LL_E_TRANSPORT; raises for anything else. */
int ll_lua_finish(lua_State *L, ll_status st, cJSON *row, ll_error *err);
/* The same for a run's request or step: a strict-replay failure raises
 * with the full diff (ll_run_replay_detail), not the one-line summary. */
int ll_lua_finish_run(lua_State *L, ll_run *run, ll_status st, cJSON *row,
                      ll_error *err);
/* With the Run's method table on top of the stack and the module table
 * below it: adds close to the methods, makes them the Run metatable's
 * __index (with __gc, __close, __tostring), pops them, and adds open to
 * the module table. */
void ll_lua_register_run(lua_State *L);
/* Closes the host's run if it is still open: a run without a decision gets
 * the HOLD decision of ll_run_abandon (why says how the script ended). */
void ll_lua_host_close_run(ll_host *h, const char *why);
/* Whether the host's run has recorded its decision (closed or not). */
int ll_lua_host_decided(const ll_host *h);
/* Watches the host's script for its run's deadline: once --deadline-s
 * and LL_HOST_DEADLINE_GRACE_MS (l_hardstop.h) more have passed with the run
 * still open, a count hook raises at every Lua instruction, so no pcall keeps
 * the script going and the host ends the run (HOLD when undecided). Remove it
 * with lua_sethook(L, NULL, 0, 0) once the script returned. */
void ll_lua_host_watch_deadline(lua_State *L);
/* For the host's run: the ms left until its deadline and the grace (-1:
 * none, or not the host's script); and, once both are past, the hook at
 * every instruction now, so a script that waited there in a library call
 * (run:sleep) is stopped at its next instruction, not 100,000 later. */
int64_t ll_lua_host_deadline_left_ms(lua_State *L);
void ll_lua_host_deadline_now(lua_State *L);

#endif
