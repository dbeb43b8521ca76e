/* The Run's single requests (properties, read, create_container,
 * break_lease) and the Writer handles that send a writer's requests. */
#include "l_request.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "l_common.h"
#include "l_run.h"

static int request(lua_State *L, ll_run *run, ll_req_spec *s) {
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_request(run, s, &row, &err);
  return ll_lua_finish_run(L, run, st, row, &err);
}

/* run:properties([step]) -> row | nil, err */
static int l_properties(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP] = "properties";
  ll_lua_arg_str(L, 2, "run:properties", "the step label", step, sizeof step,
                 0);
  ll_req_spec s = ll_req_spec_for(LL_OP_GET_PROPERTIES, step, "observer");
  return request(L, h->run, &s);
}

/* run:read([step]) -> row | nil, err (content read without a lease) */
static int l_read(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP] = "read";
  ll_lua_arg_str(L, 2, "run:read", "the step label", step, sizeof step, 0);
  ll_req_spec s = ll_req_spec_for(LL_OP_GET_BLOB, step, "observer");
  return request(L, h->run, &s);
}

/* run:create_container() -> row | nil, err (lab set-up only) */
static int l_create_container(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_req_spec s =
      ll_req_spec_for(LL_OP_CREATE_CONTAINER, "create container", "operator");
  return request(L, h->run, &s);
}

/* run:break_lease{period=30[, step]} -> row | nil, err */
static int l_break(lua_State *L) {
  const char *fn = "run:break_lease";
  l_run *h = ll_lua_check_run(L, 1);
  lua_Integer period =
      ll_lua_opt_int(L, 2, fn, "period", 30, 0, LL_BREAK_PERIOD_MAX);
  char step[LL_LUA_LABEL_CAP] = "break";
  ll_lua_opt_str(L, 2, fn, "step", step, sizeof step);
  ll_req_spec s = ll_req_spec_for(LL_OP_LEASE_BREAK, step, "operator");
  s.break_period = (long)period;
  return request(L, h->run, &s);
}

/* The writer at idx and its run (which the writer keeps alive). The run
 * handle itself is what the uservalue holds, never a script's value. */
static l_writer *check_writer(lua_State *L, int idx, const char *fn,
                              l_run **run) {
  l_writer *w = ll_lua_check_handle(L, idx, LL_WRITER_MT, fn);
  lua_getiuservalue(L, idx, 1);
  *run = ll_lua_check_run(L, -1);
  lua_pop(L, 1); /* still referenced by the writer at idx */
  return w;
}

static int new_writer(lua_State *L, int bound) {
  const char *fn = bound ? "run:writer" : "run:unbound";
  l_run *h = ll_lua_check_run(L, 1);
  char alias[LL_LUA_ALIAS_CAP];
  ll_lua_arg_str(L, 2, fn, "the writer alias (1 to 15 of [A-Za-z0-9_-])", alias,
                 sizeof alias, 1);
  /* roles, not writers: the operator's credential breaks and creates the
   * container, the observer's reads (--credential-observer is "every
   * read"); a writer by either name would write with it */
  if (ll_run_role(alias))
    return ll_lua_raisef(L, LL_E_USAGE,
                         "%s: '%s' is a role, not a writer: name the writer "
                         "(A, B, ...) the manifest permits",
                         fn, alias);
  /* an unbound writer is checked as a bound one is (each of its requests
   * is checked again in the core, run_request.c) */
  ll_error err = {0};
  ll_status st = bound ? ll_run_bind(h->run, alias, &err)
                       : ll_run_actor_ok(h->run, alias, &err);
  if (st != LL_OK)
    return ll_lua_raise(L, st, err.message);
  l_writer *w = lua_newuserdatauv(L, sizeof *w, 1);
  snprintf(w->alias, sizeof w->alias, "%s", alias);
  w->bound = bound;
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, LL_WRITER_MT);
  return 1;
}

/* run:writer(alias) -> Writer bound to a client-generated lease ID */
static int l_writer_new(lua_State *L) {
  return new_writer(L, 1);
}
/* run:unbound(alias) -> Writer that never sends a lease ID */
static int l_unbound_new(lua_State *L) {
  return new_writer(L, 0);
}

/* W:put(revision[, {step=, control=}]) -> row | nil, err */
static int l_w_put(lua_State *L) {
  const char *fn = "writer:put";
  l_run *h;
  l_writer *w = check_writer(L, 1, fn, &h);
  lua_Integer rev =
      ll_lua_arg_int(L, 2, fn, "the revision", 0, LL_LUA_REVISION_MAX);
  char step[LL_LUA_LABEL_CAP];
  snprintf(step, sizeof step, "rev %lld", (long long)rev);
  ll_lua_opt_str(L, 3, fn, "step", step, sizeof step);
  ll_req_spec s = ll_req_spec_for(LL_OP_PUT_BLOB, step, w->alias);
  s.revision = (long)rev;
  s.bound = w->bound;
  s.lease = w->bound ? w->alias : NULL;
  s.control = ll_lua_opt_bool(L, 3, fn, "control", 0);
  return request(L, h->run, &s);
}

static int lease_op(lua_State *L, ll_op op, const char *fn, const char *dflt) {
  l_run *h;
  l_writer *w = check_writer(L, 1, fn, &h);
  if (!w->bound && op != LL_OP_DELETE_BLOB)
    return ll_lua_raisef(L, LL_E_USAGE,
                         "%s: an unbound writer has no lease to act on", fn);
  char step[LL_LUA_LABEL_CAP];
  snprintf(step, sizeof step, "%s %s", dflt, w->alias);
  ll_lua_opt_str(L, 2, fn, "step", step, sizeof step);
  ll_req_spec s = ll_req_spec_for(op, step, w->alias);
  s.bound = w->bound;
  if (op == LL_OP_LEASE_ACQUIRE) {
    s.proposed = w->alias;
    /* -1 (infinite) or 15..60: the core names the gap in between */
    s.lease_duration =
        (long)ll_lua_opt_int(L, 2, fn, "duration", LL_LEASE_INFINITE,
                             LL_LEASE_INFINITE, LL_LEASE_DURATION_MAX);
  } else {
    s.lease = w->bound ? w->alias : NULL;
  }
  return request(L, h->run, &s);
}

/* W:acquire{duration=-1} / W:release() / W:renew() / W:delete() */
static int l_w_acquire(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_ACQUIRE, "writer:acquire", "acquire");
}
static int l_w_release(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_RELEASE, "writer:release", "release");
}
static int l_w_renew(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_RENEW, "writer:renew", "renew");
}
static int l_w_change(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_CHANGE, "writer:change", "change");
}
static int l_w_delete(lua_State *L) {
  return lease_op(L, LL_OP_DELETE_BLOB, "writer:delete", "delete by");
}

/* W.alias, W.bound, or a method; nil for any other key (strings only: a
 * number is not converted in place, nothing else is a name). */
static int l_w_index(lua_State *L) {
  l_writer *w = ll_lua_check_handle(L, 1, LL_WRITER_MT, "writer.__index");
  if (lua_type(L, 2) != LUA_TSTRING) {
    lua_pushnil(L);
    return 1;
  }
  const char *k = lua_tostring(L, 2); /* argument slot: stays reachable */
  if (strcmp(k, "alias") == 0) {
    lua_pushstring(L, w->alias);
    return 1;
  }
  if (strcmp(k, "bound") == 0) {
    lua_pushboolean(L, w->bound);
    return 1;
  }
  luaL_getmetatable(L, LL_WRITER_MT);
  lua_pushliteral(L, "methods");
  lua_rawget(L, -2);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

static int l_w_tostring(lua_State *L) {
  l_writer *w = ll_lua_check_handle(L, 1, LL_WRITER_MT, "writer.__tostring");
  lua_pushfstring(L, "leaselua.Writer(%s%s)", w->alias,
                  w->bound ? ", lease-bound" : ", unbound");
  return 1;
}

static const luaL_Reg writer_methods[] = {
    {"put", l_w_put},     {"acquire", l_w_acquire}, {"release", l_w_release},
    {"renew", l_w_renew}, {"delete", l_w_delete},   {"change", l_w_change},
    {NULL, NULL}};

static const luaL_Reg run_requests[] = {
    {"properties", l_properties},
    {"read", l_read},
    {"create_container", l_create_container},
    {"break_lease", l_break},
    {"writer", l_writer_new},
    {"unbound", l_unbound_new},
    {NULL, NULL}};

void ll_lua_request_methods(lua_State *L) {
  if (luaL_newmetatable(L, LL_WRITER_MT)) {
    luaL_newlib(L, writer_methods);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, l_w_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_w_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, LL_WRITER_MT);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot swap methods */
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, run_requests, 0);
}
