/* Run and Writer handles: the Lua face of core/run. Every method checks its
 * arguments before any C allocation, and hands scripts export rows only. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "l_common.h"
#include "l_json.h"
#include "l_run.h"
#include "manifest.h"
#include "operator.h"
#include "run.h"
#include "transport_factory.h"

/* The run at idx; misuse names the method as luaL_argerror does (from
 * the call site, never from the value). */
l_run *ll_lua_check_run(lua_State *L, int idx) {
  l_run *h = luaL_testudata(L, idx, LL_RUN_MT);
  if (h && h->run)
    return h;
  char fn[64] = "run";
  lua_Debug ar;
  if (lua_getstack(L, 0, &ar) && lua_getinfo(L, "n", &ar) && ar.name)
    snprintf(fn, sizeof fn, "run:%.48s", ar.name);
  if (!h)
    ll_lua_check_handle(L, idx, LL_RUN_MT, fn); /* raises */
  ll_lua_raisef(L, LL_E_CLOSED, "%s: run handle used after close", fn);
  return h; /* not reached */
}

/* Pushes row (and deletes it), or the error convention of STYLE.md:
 * refusals raise; transport failures return nil, err with the row. */
int ll_lua_finish(lua_State *L, ll_status st, cJSON *row, ll_error *err) {
  if (st == LL_OK) {
    ll_lua_push_json(L, row);
    cJSON_Delete(row);
    return 1;
  }
  if (st == LL_E_TRANSPORT) {
    lua_pushnil(L);
    ll_lua_push_error(L, st, err->message);
    ll_lua_push_json(L, row);
    cJSON_Delete(row);
    lua_setfield(L, -2, "row");
    return 2;
  }
  cJSON_Delete(row);
  return ll_lua_raise(L, st, err->message);
}

int ll_lua_finish_run(lua_State *L, ll_run *run, ll_status st, cJSON *row,
                      ll_error *err) {
  if (st == LL_E_REPLAY) {
    const char *detail = ll_run_replay_detail(run);
    cJSON_Delete(row);
    return ll_lua_raise(L, st, detail ? detail : err->message);
  }
  return ll_lua_finish(L, st, row, err);
}

/* ---------------------------------------------------------------- open */

/* Pushes t[k] without metamethods; returns its type. */
static int rawfield(lua_State *L, int idx, const char *k) {
  lua_pushstring(L, k);
  return lua_rawget(L, idx);
}

static int open_raise(lua_State *L, ll_code code, const char *fmt,
                      const char *a) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, a);
  return ll_lua_raise(L, code, msg);
}

static long plan_int(lua_State *L, int t, const char *k, long lo, long hi) {
  int ok = 0;
  lua_Integer n = t == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
  if (!ok || n < lo || n > hi) {
    char msg[160];
    snprintf(msg, sizeof msg,
             "leaselua.open{%s = ...} must be an integer from %ld to %ld", k,
             lo, hi);
    ll_lua_raise(L, LL_E_USAGE, msg);
  }
  return (long)n;
}

static void plan_str(lua_State *L, int t, const char *k, char *dst,
                     size_t cap) {
  size_t n = 0;
  const char *v = t == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
  if (!v || n == 0 || n >= cap || strlen(v) != n)
    open_raise(L, LL_E_USAGE,
               "leaselua.open{%s = ...} must be a short non-empty string", k);
  memcpy(dst, v, n + 1);
}

/* The flow keys: name, actors, break_period(s), window_attempts. In the
 * host's sandbox every other key is refused, with where the operator sets
 * it; the embedding API also takes the operator keys (transport_factory). */
static void read_plan(lua_State *L, int idx, ll_flow_plan *p, int sandbox) {
  memset(p, 0, sizeof *p);
  ll_strlcpy(p->name, "run", sizeof p->name);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      ll_lua_raise(L, LL_E_USAGE,
                   "leaselua.open takes a table of named "
                   "options");
    const char *k = lua_tostring(L, -2); /* the key stays on the stack */
    int t = lua_type(L, -1);
    if (strcmp(k, "destructive") == 0 || strcmp(k, "recover") == 0) {
      /* the embedding API's own keys of these names are read again by
       * ll_operator_from_lua; for a plan they say what the flow needs */
      if (t != LUA_TBOOLEAN)
        open_raise(L, LL_E_USAGE, "leaselua.open{%s = ...} must be a boolean",
                   k);
      if (k[0] == 'd')
        p->destructive = lua_toboolean(L, -1);
      else
        p->recover = lua_toboolean(L, -1);
    } else if (strcmp(k, "name") == 0) {
      plan_str(L, t, k, p->name, sizeof p->name);
    } else if (strcmp(k, "window_attempts") == 0) {
      p->window_attempts = plan_int(L, t, k, -1000000, 1000000);
    } else if (strcmp(k, "break_period") == 0) {
      p->break_periods[0] = plan_int(L, t, k, -1000000, 1000000);
      p->nbreaks = 1;
    } else if (strcmp(k, "break_periods") == 0 || strcmp(k, "actors") == 0) {
      int breaks = k[0] == 'b';
      int max = breaks ? LL_PLAN_MAX_BREAKS : LL_PLAN_MAX_ACTORS;
      if (t != LUA_TTABLE || lua_rawlen(L, -1) == 0 ||
          lua_rawlen(L, -1) > (size_t)max)
        open_raise(L, LL_E_USAGE,
                   "leaselua.open{%s = ...} must be a short non-empty list", k);
      int n = (int)lua_rawlen(L, -1);
      for (int i = 1; i <= n; i++) {
        int it = lua_rawgeti(L, -1, i);
        if (breaks)
          p->break_periods[i - 1] = plan_int(L, it, k, -1000000, 1000000);
        else
          plan_str(L, it, k, p->actors[i - 1], sizeof p->actors[0]);
        lua_pop(L, 1);
      }
      if (breaks)
        p->nbreaks = n;
      else
        p->nactors = n;
    } else if (sandbox) {
      char hint[160];
      char msg[512];
      if (ll_operator_hint(k, hint, sizeof hint))
        snprintf(msg, sizeof msg,
                 "'%.64s' is the operator's to set, not the script's "
                 "(invariant 14): %s",
                 k, hint);
      else
        snprintf(msg, sizeof msg,
                 "leaselua.open has no option '%.64s': a script passes only "
                 "name, actors, break_period(s), window_attempts, "
                 "destructive and recover",
                 k);
      ll_lua_raise(L, LL_E_USAGE, msg);
    }
    lua_pop(L, 1);
  }
}

/* The manifest: the operator's file, or (embedding API only) a table. */
static cJSON *open_manifest(lua_State *L, const ll_operator *op, int sandbox,
                            ll_error *err) {
  cJSON *manifest = NULL;
  if (op->manifest[0]) {
    /* read as every input file is (core/input.h): a regular file under
     * the limit, never a FIFO waited on or a link followed */
    ll_buf b = {0};
    ll_status st = ll_input_read(op->manifest, "manifest", "--manifest",
                                 LL_MANIFEST_FILE_MAX, &b, err);
    if (st == LL_OK)
      st = ll_manifest_parse(b.p, b.n, &manifest, err);
    else if (st == LL_E_USAGE && err)
      err->code = LL_E_MANIFEST; /* a manifest that cannot be read */
    free(b.p);
    return manifest;
  }
  if (!sandbox && rawfield(L, 1, "manifest") == LUA_TTABLE) {
    char msg[256];
    manifest = ll_lua_to_json(L, -1, msg, sizeof msg);
    if (!manifest)
      ll_fail(err, LL_E_MANIFEST, "%s", msg);
    lua_pop(L, 1);
    return manifest;
  }
  if (!sandbox)
    lua_pop(L, 1);
  if (!op->recover)
    ll_fail(err, LL_E_MANIFEST,
            "no manifest: pass --manifest FILE (see docs/EVIDENCE.md for its "
            "fields)");
  return NULL;
}

/* run = leaselua.open{name=, actors=, break_period(s)=, window_attempts=}
 * in the host's sandbox: everything else is the operator's (command line,
 * environment, manifest; core/operator.h). The embedding API (stock lua5.4)
 * also takes the operator keys: evidence, manifest (path or table),
 * account_url, container, blob, ca_file, auth={...}, deadline_s, recover,
 * connect_timeout_ms, total_timeout_ms, replay, record. Raises on any
 * configuration error, naming it, before anything is sent. */
static int l_open(lua_State *L) {
  ll_host *host = ll_lua_host(L);
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  if (lua_type(L, 1) != LUA_TTABLE)
    return ll_lua_raisef(L, LL_E_USAGE,
                         "leaselua.open: argument 1 must be a table of "
                         "options, got %s",
                         luaL_typename(L, 1));
  lua_settop(L, 1);
  ll_flow_plan plan;
  read_plan(L, 1, &plan, host != NULL);
  ll_operator local;
  const ll_operator *op = host ? host->op : &local;
  ll_error err = {0};
  if (host && host->config_error.code)
    return ll_lua_raise(L, host->config_error.code, host->config_error.message);
  if (host && host->opened)
    return ll_lua_raise(L, LL_E_USAGE,
                        "a script opens one run: leaselua.open was already "
                        "called");
  if (host && plan.destructive && !op->destructive)
    return ll_lua_raise(L, LL_E_USAGE,
                        "this flow overwrites the blob without a lease: the "
                        "operator passes --destructive --after DIR (an "
                        "accepted, cleaned-up main handoff on this blob)");
  if (host && plan.recover && !op->recover)
    return ll_lua_raise(L, LL_E_USAGE,
                        "this flow recovers an interrupted run: pass "
                        "--recover --evidence DIR");
  if (!host) {
    ll_operator_defaults(&local);
    const char *sas = getenv("AZURE_STORAGE_SAS");
    if (sas && *sas)
      local.auth_kind = LL_AUTH_SAS;
    ll_operator_from_lua(L, 1, &local);
    if (ll_operator_finish(&local, &err) != LL_OK)
      return ll_lua_raise(L, err.code, err.message);
  }
  if (ll_flow_plan_check(&plan, NULL, &err) != LL_OK)
    return ll_lua_raise(L, err.code, err.message);
  cJSON *manifest = open_manifest(L, op, host != NULL, &err);
  if (err.code)
    return ll_lua_raise(L, err.code, err.message);
  if (manifest) {
    const cJSON *actors =
        cJSON_GetObjectItemCaseSensitive(manifest, "permitted_actors");
    if (ll_flow_plan_check(&plan, actors, &err) != LL_OK) {
      cJSON_Delete(manifest);
      return ll_lua_raise(L, err.code, err.message);
    }
  }
  char evidence[512];
  ll_strlcpy(evidence, op->evidence, sizeof evidence);
  if (!evidence[0] &&
      ll_operator_default_evidence(op, plan.name, evidence, sizeof evidence,
                                   &err) != LL_OK) {
    cJSON_Delete(manifest);
    return ll_lua_raise(L, err.code, err.message);
  }
  l_run *h = lua_newuserdatauv(L, sizeof *h, 1);
  h->run = NULL;
  h->host = NULL;
  luaL_setmetatable(L, LL_RUN_MT);
  ll_run_config cfg = {0};
  char label_local[16] = "";
  char *label = host ? host->label : label_local;
  if (ll_transport_make(op, &cfg, label, sizeof label_local, &err) != LL_OK) {
    cJSON_Delete(manifest);
    return ll_lua_raise(L, err.code, err.message);
  }
  cfg.evidence_dir = evidence;
  cfg.recover = op->recover;
  cfg.manifest = manifest;
  cfg.account_url = op->account_url;
  cfg.container = op->container;
  cfg.blob = op->blob;
  cfg.lua_version = LUA_RELEASE;
  cfg.max_single_put = op->max_single_put;
  cfg.api_version = op->api_version[0] ? op->api_version : NULL;
  cfg.allow_unlisted_api_version = op->allow_api_version;
  h->run = ll_run_open(&cfg, &err);
  cJSON_Delete(manifest);
  if (!h->run)
    return ll_lua_raise(L, err.code, err.message);
  if (ll_run_plan(h->run, &plan, op->after[0] ? op->after : NULL, &err) !=
      LL_OK) {
    ll_run_close(h->run);
    h->run = NULL;
    return ll_lua_raise(L, err.code, err.message);
  }
  if (host) {
    host->opened = 1;
    host->handle = h;
    h->host = host;
  }
  return 1;
}

/* ------------------------------------------------------------ requests */

static int request(lua_State *L, ll_run *run, ll_req_spec *s) {
  ll_error err = {0};
  cJSON *row = NULL;
  ll_status st = ll_run_request(run, s, &row, &err);
  return ll_lua_finish_run(L, run, st, row, &err);
}

static ll_req_spec spec(ll_op op, const char *step, const char *actor) {
  ll_req_spec s = {.op = op,
                   .step = step,
                   .actor = actor,
                   .revision = -1,
                   .lease_duration = -1,
                   .break_period = -1};
  return s;
}

/* run:properties([step]) -> row | nil, err */
static int l_properties(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP] = "properties";
  ll_lua_arg_str(L, 2, "run:properties", "the step label", step, sizeof step,
                 0);
  ll_req_spec s = spec(LL_OP_GET_PROPERTIES, step, "observer");
  return request(L, h->run, &s);
}

/* run:read([step]) -> row | nil, err (content read without a lease) */
static int l_read(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  char step[LL_LUA_LABEL_CAP] = "read";
  ll_lua_arg_str(L, 2, "run:read", "the step label", step, sizeof step, 0);
  ll_req_spec s = spec(LL_OP_GET_BLOB, step, "observer");
  return request(L, h->run, &s);
}

/* run:create_container() -> row | nil, err (lab set-up only) */
static int l_create_container(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_req_spec s = spec(LL_OP_CREATE_CONTAINER, "create container", "operator");
  return request(L, h->run, &s);
}

/* run:break_lease{period=30[, step]} -> row | nil, err */
static int l_break(lua_State *L) {
  const char *fn = "run:break_lease";
  l_run *h = ll_lua_check_run(L, 1);
  lua_Integer period = ll_lua_opt_int(L, 2, fn, "period", 30, 0, 60);
  char step[LL_LUA_LABEL_CAP] = "break";
  ll_lua_opt_str(L, 2, fn, "step", step, sizeof step);
  ll_req_spec s = spec(LL_OP_LEASE_BREAK, step, "operator");
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
  if (bound) {
    ll_error err = {0};
    ll_status st = ll_run_bind(h->run, alias, &err);
    if (st != LL_OK)
      return ll_lua_raise(L, st, err.message);
  }
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
  ll_req_spec s = spec(LL_OP_PUT_BLOB, step, w->alias);
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
  ll_req_spec s = spec(op, step, w->alias);
  s.bound = w->bound;
  if (op == LL_OP_LEASE_ACQUIRE) {
    s.proposed = w->alias;
    /* -1 (infinite) or 15..60: the core names the gap in between */
    s.lease_duration = (long)ll_lua_opt_int(L, 2, fn, "duration", -1, -1, 60);
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

/* Adds open and the request methods; the flow methods come from
 * l_run_flow.c. Leaves the module table on the stack. */
void ll_lua_register_run(lua_State *L) {
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
  if (luaL_newmetatable(L, LL_RUN_MT)) {
    lua_newtable(L); /* methods */
    luaL_setfuncs(L, run_requests, 0);
    ll_lua_run_flow_methods(L);
    lua_setfield(L, -2, "__index");
    ll_lua_run_meta(L);
    lua_pushliteral(L, LL_RUN_MT);
    lua_setfield(L, -2, "__metatable");
  }
  lua_pop(L, 1);
  lua_pushcfunction(L, l_open);
  lua_setfield(L, -2, "open");
}
