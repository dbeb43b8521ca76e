/* Run and Writer handles: the Lua face of core/run. Every method checks its
 * arguments before any C allocation, and hands scripts export rows only. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "l_common.h"
#include "l_json.h"
#include "l_run.h"
#include "manifest.h"
#include "run.h"
#include "transport_factory.h"

l_run *ll_lua_check_run(lua_State *L, int idx) {
  l_run *h = luaL_checkudata(L, idx, LL_RUN_MT);
  if (!h->run)
    ll_lua_raise(L, LL_E_CLOSED, "run handle used after close");
  return h;
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

static ll_status read_file(const char *path, char **out, size_t *len,
                           ll_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return ll_fail(err, LL_E_MANIFEST,
                   "cannot read manifest %s: check --manifest", path);
  char *buf = malloc(65537);
  size_t n = buf ? fread(buf, 1, 65537, f) : 0;
  fclose(f);
  if (!buf)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  *out = buf;
  *len = n;
  return LL_OK;
}

/* run = leaselua.open{evidence=, manifest=path|table, account_url=,
 * container=, blob=, ca_file=, auth={...}, deadline_s=, recover=,
 * connect_timeout_ms=, total_timeout_ms=, replay=, record=}. Raises on any
 * configuration error, naming it. */
static int l_open(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  ll_error err = {0};
  char msg[256];
  const char *evidence = ll_lua_optfield_str(L, 1, "evidence", NULL);
  const char *url = ll_lua_optfield_str(L, 1, "account_url", NULL);
  const char *container = ll_lua_optfield_str(L, 1, "container", NULL);
  const char *blob = ll_lua_optfield_str(L, 1, "blob", NULL);
  int recover = ll_lua_optfield_bool(L, 1, "recover", 0);
  lua_Integer deadline_s = ll_lua_optfield_int(L, 1, "deadline_s", 900);
  lua_Integer max_put = ll_lua_optfield_int(L, 1, "max_single_put", 0);
  if (max_put < 0)
    return luaL_argerror(L, 1, "max_single_put must be positive");
  if (!evidence)
    return ll_lua_raise(L, LL_E_USAGE,
                        "no evidence directory: pass --evidence DIR");
  if (!url || !container || !blob)
    return ll_lua_raise(L, LL_E_USAGE,
                        "target incomplete: set AZURE_STORAGE_ACCOUNT_URL, "
                        "AZURE_STORAGE_CONTAINER and AZURE_STORAGE_BLOB");
  ll_transport_config tc;
  ll_transport_config_from_lua(L, 1, &tc);
  lua_getfield(L, 1, "manifest");
  cJSON *manifest = NULL;
  if (lua_type(L, -1) == LUA_TSTRING) {
    char *text = NULL;
    size_t len = 0;
    ll_status st = read_file(lua_tostring(L, -1), &text, &len, &err);
    if (st == LL_OK) {
      st = ll_manifest_parse(text, len, &manifest, &err);
      free(text);
    }
    if (st != LL_OK)
      return ll_lua_raise(L, st, err.message);
  } else if (lua_type(L, -1) == LUA_TTABLE) {
    manifest = ll_lua_to_json(L, -1, msg, sizeof msg);
    if (!manifest)
      return ll_lua_raise(L, LL_E_MANIFEST, msg);
  } else if (!recover) {
    return ll_lua_raise(L, LL_E_MANIFEST,
                        "no manifest: pass --manifest FILE (see "
                        "docs/EVIDENCE.md for its fields)");
  }
  lua_pop(L, 1);
  l_run *h = lua_newuserdatauv(L, sizeof *h, 1);
  h->run = NULL;
  luaL_setmetatable(L, LL_RUN_MT);
  ll_run_config cfg = {0};
  if (ll_transport_make(&tc, url, deadline_s, &cfg, &err) != LL_OK) {
    cJSON_Delete(manifest);
    return ll_lua_raise(L, err.code, err.message);
  }
  cfg.evidence_dir = evidence;
  cfg.recover = recover;
  cfg.manifest = manifest;
  cfg.account_url = url;
  cfg.container = container;
  cfg.blob = blob;
  cfg.lua_version = LUA_RELEASE;
  cfg.max_single_put = (size_t)max_put;
  h->run = ll_run_open(&cfg, &err);
  cJSON_Delete(manifest);
  ll_transport_config_cleanup(&tc);
  if (!h->run)
    return ll_lua_raise(L, err.code, err.message);
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
  ll_req_spec s = spec(LL_OP_GET_PROPERTIES, luaL_optstring(L, 2, "properties"),
                       "observer");
  return request(L, h->run, &s);
}

/* run:read([step]) -> row | nil, err (content read without a lease) */
static int l_read(lua_State *L) {
  l_run *h = ll_lua_check_run(L, 1);
  ll_req_spec s =
      spec(LL_OP_GET_BLOB, luaL_optstring(L, 2, "read"), "observer");
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
  l_run *h = ll_lua_check_run(L, 1);
  lua_Integer period = ll_lua_optfield_int(L, 2, "period", 30);
  if (period < 0 || period > 60)
    return luaL_argerror(L, 2, "break period must be 0..60 seconds");
  ll_req_spec s = spec(LL_OP_LEASE_BREAK,
                       ll_lua_optfield_str(L, 2, "step", "break"), "operator");
  s.break_period = (long)period;
  return request(L, h->run, &s);
}

static l_writer *check_writer(lua_State *L, int idx, l_run **run) {
  l_writer *w = luaL_checkudata(L, idx, LL_WRITER_MT);
  lua_getiuservalue(L, idx, 1);
  *run = ll_lua_check_run(L, -1);
  lua_pop(L, 1);
  return w;
}

static int new_writer(lua_State *L, int bound) {
  l_run *h = ll_lua_check_run(L, 1);
  const char *alias = luaL_checkstring(L, 2);
  if (strlen(alias) >= 16)
    return luaL_argerror(L, 2, "alias longer than 15 characters");
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
  l_run *h;
  l_writer *w = check_writer(L, 1, &h);
  lua_Integer rev = luaL_checkinteger(L, 2);
  char step[64];
  snprintf(step, sizeof step, "rev %lld", (long long)rev);
  ll_req_spec s =
      spec(LL_OP_PUT_BLOB, ll_lua_optfield_str(L, 3, "step", step), w->alias);
  s.revision = (long)rev;
  s.bound = w->bound;
  s.lease = w->bound ? w->alias : NULL;
  s.control = ll_lua_optfield_bool(L, 3, "control", 0);
  return request(L, h->run, &s);
}

static int lease_op(lua_State *L, ll_op op, const char *dflt) {
  l_run *h;
  l_writer *w = check_writer(L, 1, &h);
  if (!w->bound && op != LL_OP_DELETE_BLOB)
    return ll_lua_raise(L, LL_E_USAGE,
                        "an unbound writer has no lease to act on");
  char step[64];
  snprintf(step, sizeof step, "%s %s", dflt, w->alias);
  ll_req_spec s = spec(op, ll_lua_optfield_str(L, 2, "step", step), w->alias);
  s.bound = w->bound;
  if (op == LL_OP_LEASE_ACQUIRE) {
    s.proposed = w->alias;
    s.lease_duration = (long)ll_lua_optfield_int(L, 2, "duration", -1);
  } else {
    s.lease = w->bound ? w->alias : NULL;
  }
  return request(L, h->run, &s);
}

/* W:acquire{duration=-1} / W:release() / W:renew() / W:delete() */
static int l_w_acquire(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_ACQUIRE, "acquire");
}
static int l_w_release(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_RELEASE, "release");
}
static int l_w_renew(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_RENEW, "renew");
}
static int l_w_change(lua_State *L) {
  return lease_op(L, LL_OP_LEASE_CHANGE, "change");
}
static int l_w_delete(lua_State *L) {
  return lease_op(L, LL_OP_DELETE_BLOB, "delete by");
}

static int l_w_index(lua_State *L) {
  l_writer *w = luaL_checkudata(L, 1, LL_WRITER_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "alias") == 0) {
    lua_pushstring(L, w->alias);
    return 1;
  }
  if (strcmp(k, "bound") == 0) {
    lua_pushboolean(L, w->bound);
    return 1;
  }
  luaL_getmetatable(L, LL_WRITER_MT);
  lua_getfield(L, -1, "methods");
  lua_getfield(L, -1, k);
  return 1;
}

static int l_w_tostring(lua_State *L) {
  l_writer *w = luaL_checkudata(L, 1, LL_WRITER_MT);
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
