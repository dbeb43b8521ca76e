/* Shared by l_run.c (open, requests, writers) and l_run_flow.c (composite
 * steps, decisions, rows, time). */
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

typedef struct {
  char alias[16];
  int bound;
} l_writer;

l_run *ll_lua_check_run(lua_State *L, int idx);
/* Pushes row (and deletes it) for LL_OK; nil, err (err.row = row) for
 * LL_E_TRANSPORT; raises for anything else. */
int ll_lua_finish(lua_State *L, ll_status st, cJSON *row, ll_error *err);
/* The same for a run's request or step: a strict-replay failure raises
 * with the full diff (ll_run_replay_detail), not the one-line summary. */
int ll_lua_finish_run(lua_State *L, ll_run *run, ll_status st, cJSON *row,
                      ll_error *err);
/* Adds the flow methods to the table on top of the stack. */
void ll_lua_run_flow_methods(lua_State *L);
/* Sets __gc, __close and __tostring on the Run metatable on top. */
void ll_lua_run_meta(lua_State *L);
/* Ends a host-owned run: a run without a recorded decision gets the HOLD
 * decision of ll_run_abandon; then it is closed and h forgets it. */
void ll_lua_run_end(ll_host *h, l_run *handle, const char *why);
/* Adds open to the module table on top of the stack. */
void ll_lua_register_run(lua_State *L);

#endif
