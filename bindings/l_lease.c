/* The lease table's bindings: leaselua.lease_plan (the plan's text, for
 * --plan: nothing opened, nothing sent), run:lease_plan (the plan, recorded
 * and declared before the first request), run:lease_lifecycle (the next
 * lifecycle, established by C) and run:cell(state, op) (the next cell,
 * attempted by C). Whether destructive lifecycles are authorised is the
 * operator's (--destructive --after DIR), read here from the host. */
#include "l_lease.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "l_common.h"
#include "l_host.h"
#include "l_json.h"
#include "l_run.h"
#include "lease_table.h"
#include "run.h"

static long break_period_arg(lua_State *L, const char *fn) {
  return (long)ll_lua_opt_int(L, 1 + (lua_type(L, 1) == LUA_TUSERDATA), fn,
                              "break_period", 10, 1, LL_BREAK_PERIOD_MAX);
}

static int operator_destructive(lua_State *L, const char **after) {
  ll_host *h = ll_lua_host(L);
  *after = h && h->op->destructive ? h->op->after : NULL;
  return h && h->op->destructive;
}

static void push_plan_text(lua_State *L, const ll_lease_plan *p) {
  char *text = ll_lease_plan_text(p);
  if (!text)
    ll_lua_raise(L, LL_E_NOMEM, "out of memory writing the plan");
  lua_pushstring(L, text);
  free(text);
}

/* leaselua.lease_plan{break_period = 10} -> text */
int ll_lua_lease_plan(lua_State *L) {
  const char *fn = "leaselua.lease_plan";
  long period = break_period_arg(L, fn);
  const char *after = NULL;
  int destructive = operator_destructive(L, &after);
  ll_lease_plan *p = ll_malloc(sizeof *p);
  if (!p)
    return ll_lua_raise(L, LL_E_NOMEM, "out of memory");
  memset(p, 0, sizeof *p);
  ll_error err = {0};
  if (ll_lease_plan_build(period, destructive, p, &err) != LL_OK) {
    ll_free(p);
    return ll_lua_raise(L, err.code, err.message);
  }
  char *text = ll_lease_plan_text(p);
  ll_free(p);
  if (!text)
    return ll_lua_raise(L, LL_E_NOMEM, "out of memory writing the plan");
  lua_pushstring(L, text);
  free(text);
  ll_host *h = ll_lua_host(L);
  if (h && !h->opened)
    h->help = 1; /* a plan printed without a run claims nothing: exit 0 */
  return 1;
}

/* run:lease_plan{break_period = 10} -> {text, cells, wait_s, lifecycles =
 * {{state, destructive, wait_s, cells = {{state, op}, ...}}, ...}} */
static int l_run_lease_plan(lua_State *L) {
  const char *fn = "run:lease_plan";
  l_run *h = ll_lua_check_run(L, 1);
  long period = break_period_arg(L, fn);
  const char *after = NULL;
  int destructive = operator_destructive(L, &after);
  ll_error err = {0};
  const ll_lease_plan *p = NULL;
  ll_status st =
      ll_lease_table_begin(h->run, period, destructive, after, &p, &err);
  if (st != LL_OK)
    return ll_lua_finish_run(L, h->run, st, NULL, &err);
  lua_createtable(L, 0, 4);
  push_plan_text(L, p);
  lua_setfield(L, -2, "text");
  lua_pushinteger(L, p->ncells);
  lua_setfield(L, -2, "cells");
  lua_pushinteger(L, p->wait_s);
  lua_setfield(L, -2, "wait_s");
  lua_createtable(L, p->nlife, 0);
  for (int i = 0; i < p->nlife; i++) {
    const ll_lt_life *l = &p->life[i];
    lua_createtable(L, 0, 4);
    lua_pushstring(L, ll_lease_state_name(l->state));
    lua_setfield(L, -2, "state");
    lua_pushboolean(L, l->destructive);
    lua_setfield(L, -2, "destructive");
    lua_pushinteger(L, l->wait_s);
    lua_setfield(L, -2, "wait_s");
    lua_createtable(L, l->ncells, 0);
    for (int k = 0; k < l->ncells; k++) {
      const ll_lt_cell *c = &p->cells[l->first + k];
      lua_createtable(L, 0, 2);
      lua_pushstring(L, ll_lease_state_name(c->state));
      lua_setfield(L, -2, "state");
      lua_pushstring(L, ll_lease_op_name(c->op));
      lua_setfield(L, -2, "op");
      lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "cells");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "lifecycles");
  return 1;
}

/* run:lease_lifecycle() -> {epoch, lifecycle, state, reached, reason,
 * cells} */
static int l_run_lease_lifecycle(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_error err = {0};
  cJSON *out = NULL;
  ll_status st = ll_lease_table_lifecycle(h->run, &out, &err);
  return ll_lua_finish_run(L, h->run, st, out, &err);
}

/* run:cell(state, op) -> the cell row; names as ll_lease_state_name and
 * ll_lease_op_name spell them ("Leased (A)", "write with B") */
static int l_run_cell(lua_State *L) {
  const char *fn = "run:cell";
  l_run *h = ll_lua_check_run(L, 1);
  char sn[32], on[32];
  ll_lua_arg_str(L, 2, fn, "the lease state (\"Leased (A)\", ...)", sn,
                 sizeof sn, 1);
  ll_lua_arg_str(L, 3, fn, "the attempt (\"write with B\", ...)", on, sizeof on,
                 1);
  ll_lease_state s;
  ll_lease_op op;
  if (ll_lease_state_from_name(sn, &s) != 0)
    return ll_lua_raisef(L, LL_E_USAGE, "%s: no lease state '%s'", fn, sn);
  if (ll_lease_op_from_name(on, &op) != 0)
    return ll_lua_raisef(L, LL_E_USAGE, "%s: no attempt '%s'", fn, on);
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_lease_table_cell(h->run, s, op, &row, &err);
  return ll_lua_finish_run(L, h->run, st, row, &err);
}

static const luaL_Reg methods[] = {{"lease_plan", l_run_lease_plan},
                                   {"lease_lifecycle", l_run_lease_lifecycle},
                                   {"cell", l_run_cell},
                                   {NULL, NULL}};

void ll_lua_lease_methods(lua_State *L) {
  luaL_setfuncs(L, methods, 0);
}
