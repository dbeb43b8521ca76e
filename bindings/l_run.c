/* The Run handle (leaselua.Run), the Lua face of core/run: leaselua.open,
 * the checks and result conventions every Run method shares, and the end
 * of a run (close, __close, __gc, and the host's end of a script). The
 * methods themselves are in l_request.c and l_run_flow.c, above this file.
 * Every method checks its arguments before any C allocation, and hands
 * scripts export rows only. */
#include "l_run.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "l_common.h"
#include "l_hardstop.h"
#include "l_json.h"
#include "l_transport.h"
#include "manifest.h"
#include "operator.h"
#include "run.h"

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
 * it; the embedding API also takes the operator keys (l_transport.c). */
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
    if (strcmp(k, "lease_table") == 0) {
      if (t != LUA_TBOOLEAN)
        open_raise(L, LL_E_USAGE, "leaselua.open{%s = ...} must be a boolean",
                   k);
      p->lease_table = lua_toboolean(L, -1);
    } else if (strcmp(k, "destructive") == 0 || strcmp(k, "recover") == 0) {
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
                 "destructive, recover and lease_table",
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

static void run_end(ll_host *host, l_run *h, const char *why);

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
  if (host && (host->opened || host->ended))
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
  if (ll_transport_make(op, &cfg, host ? host->flow : NULL, label,
                        sizeof label_local, &err) != LL_OK) {
    cJSON_Delete(manifest);
    return ll_lua_raise(L, err.code, err.message);
  }
  /* each actor's own credential, before anything is sent (and a replay's
   * manifest may name credentials it will not need) */
  ll_cred_config creds; /* ll_run_open copies what it keeps */
  if (ll_transport_actors(op, manifest, &plan, &creds, &cfg, &err) != LL_OK) {
    cJSON_Delete(manifest);
    ll_transport_free(cfg.transport);
    ll_clock_free(cfg.clock);
    ll_auth_free(cfg.auth);
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
  cfg.deadline_s = op->deadline_s;
  cfg.api_version = op->api_version[0] ? op->api_version : NULL;
  cfg.allow_unlisted_api_version = op->allow_api_version;
  cfg.proxy = op->proxy.shown[0] ? op->proxy.shown : NULL;
  cfg.proxy_source = op->proxy.source;
  cfg.no_proxy = op->proxy.noproxy[0] ? op->proxy.noproxy : NULL;
  cfg.no_proxy_source = op->proxy.noproxy_source;
  h->run = ll_run_open(&cfg, &err);
  cJSON_Delete(manifest);
  if (!h->run)
    return ll_lua_raise(L, err.code, err.message);
  /* the bundle exists now (a recovery has appended to it): whatever
   * happens next, the host signs it, and no second open is taken */
  if (host) {
    ll_strlcpy(host->evidence_dir, evidence, sizeof host->evidence_dir);
    host->opened = 1;
  }
  /* A refused plan sent nothing: the run is closed without a decision (a
   * reopened bundle then ends on its recovery row, undecided, for the
   * operator to recover again), and the exit is the refusal's, or 70
   * when the script swallows it (a run opened, no decision recorded). */
  if (ll_run_plan(h->run, &plan, op->after[0] ? op->after : NULL, &err) !=
      LL_OK) {
    ll_run_close(h->run);
    h->run = NULL;
    return ll_lua_raise(L, err.code, err.message);
  }
  if (host) {
    host->handle = h;
    h->host = host;
    /* armed once the run holds the blob; a replay sends nothing and its
     * deadline is on a virtual clock (helper-31) */
    if (!op->replay[0])
      ll_hard_stop_arm(ll_hard_stop_seconds(op), evidence);
    ll_strlcpy(host->flow_name, plan.name, sizeof host->flow_name);
    /* the ledger says the bundle is to be signed, and by which key, so a
     * signature removed later is missed (leaselua verify) */
    if (host->sign_key_fp[0]) {
      char text[256];
      snprintf(text, sizeof text,
               "the host signs the bundle when the run ends, with %s",
               host->sign_key_fp);
      const char *fp = strstr(host->sign_key_fp, "SHA256:");
      if (ll_run_note_signing(h->run, text, fp, &err) != LL_OK)
        return ll_lua_raise(L, err.code, err.message);
    }
  }
  return 1;
}

/* Ends a host-owned run: a run without a recorded decision gets the HOLD
 * decision of ll_run_abandon; then it is closed and the host forgets it,
 * keeping what the exit code needs (decision, invariant-15 stop, replay). */
static void run_end(ll_host *host, l_run *h, const char *why) {
  if (!h->run)
    return;
  if (host)
    ll_hard_stop_disarm(); /* what the host does from here is bounded */
  ll_error err = {0};
  if (ll_run_abandon(h->run, why, &err) == LL_E_REPLAY) {
    const char *detail = ll_run_replay_detail(h->run);
    fprintf(stderr, "leaselua: LL_E_REPLAY: %s\n",
            detail ? detail : err.message);
    host->replay_failed = 1;
  }
  if (ll_run_replay_detail(h->run))
    host->replay_failed = 1;
  host->decision = ll_run_decision(h->run);
  host->stop_exit =
      host->decision >= 0 ? ll_model_stop_exit(ll_run_model(h->run)) : 0;
  ll_run_close(h->run);
  h->run = NULL;
  if (host->handle == h)
    host->handle = NULL;
}

/* The registry set of every C function a Run or Writer method runs as
 * (their metamethods but __gc included): close_run's test below. */
static const char methods_key = 'm';

/* 1 when a Run or Writer method is on the call stack under the caller:
 * script code reached from inside one (a finalizer: the stock-Lua module
 * allows them, the sandbox does not) must not free the run that method
 * is still reading. */
static int inside_method(lua_State *L) {
  lua_Debug ar;
  int found = 0;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &methods_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    return 0;
  }
  for (int level = 1; !found && lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "f", &ar))
      continue;
    found = lua_iscfunction(L, -1) && lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

/* Closes the run at 1: safe to call twice. It ends the transport first
 * (unless another error is unwinding): a replay with exchanges never
 * requested raises LL_E_REPLAY, a recording writes its fixture. A
 * host-owned run without a decision gets the host's HOLD decision first
 * (ll_run_abandon). */
static int close_run(lua_State *L, const char *fn, int unwinding) {
  l_run *h = ll_lua_check_handle(L, 1, LL_RUN_MT, fn);
  ll_error err = {0};
  ll_status st = LL_OK;
  if (h->run && inside_method(L))
    return ll_lua_raisef(L, LL_E_USAGE,
                         "%s: refused inside another run method (a "
                         "finalizer ran script code there): the run stays "
                         "open",
                         fn);
  if (h->run && h->host && ll_run_decision(h->run) < 0) {
    run_end(h->host, h, unwinding ? "it raised an error" : "it returned");
    return 0;
  }
  if (h->run && !unwinding) {
    if (h->host) /* the recording's file is written whole, never cut */
      ll_hard_stop_disarm();
    st = ll_run_end_transport(h->run, &err);
    const char *detail = ll_run_replay_detail(h->run);
    lua_pushstring(L, detail ? detail : err.message); /* outlives the run */
  }
  if (h->host) {
    run_end(h->host, h, "it returned");
  } else {
    ll_run_close(h->run);
    h->run = NULL;
  }
  if (st != LL_OK)
    return ll_lua_raise(L, st, lua_tostring(L, -1));
  return 0;
}

/* run:close(): what it is given besides the run does not matter; a script
 * cannot skip the end-of-transport check by passing an argument. */
static int l_close(lua_State *L) {
  return close_run(L, "run:close", 0);
}

/* __close(run, err): err is the error unwinding, or nil. */
static int l_close_meta(lua_State *L) {
  return close_run(L, "run.__close", !lua_isnoneornil(L, 2));
}

/* __gc: closes without raising. Only Lua calls it with a Run; a script
 * reaching it (debug.getmetatable) with another value gets nothing done. */
static int l_gc(lua_State *L) {
  l_run *h = luaL_testudata(L, 1, LL_RUN_MT);
  if (!h)
    return 0;
  if (h->host) {
    run_end(h->host, h, "its run was collected");
    return 0;
  }
  ll_run_close(h->run);
  h->run = NULL;
  return 0;
}

static int l_tostring(lua_State *L) {
  l_run *h = ll_lua_check_handle(L, 1, LL_RUN_MT, "run.__tostring");
  if (h->run)
    lua_pushfstring(L, "leaselua.Run(%s)", ll_run_id(h->run));
  else
    lua_pushliteral(L, "leaselua.Run(closed)");
  return 1;
}

/* The host's run while it is open, else NULL. */
static ll_run *host_run(const ll_host *h) {
  return h && h->handle ? h->handle->run : NULL;
}

/* The host's run is open and its deadline and grace have passed. */
static int past_grace(const ll_host *h) {
  ll_run *r = host_run(h);
  return r && ll_run_past_deadline(r, LL_HOST_DEADLINE_GRACE_MS);
}

int ll_lua_host_decided(const ll_host *h) {
  ll_run *r = host_run(h);
  return h && (h->decision >= 0 || (r && ll_run_decision(r) >= 0));
}

void ll_lua_host_close_run(ll_host *h, const char *why) {
  if (h && h->handle)
    run_end(h, h->handle, why);
}

static void deadline_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  if (!past_grace(ll_lua_host(L)))
    return;
  /* from now on every instruction raises: a pcall catches one error, and
   * its caller's next instruction raises the next */
  lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1);
  luaL_error(L,
             "LL_E_SCOPE: the run's deadline (--deadline-s) "
             "passed %d s ago and the script is still running: the host "
             "stops it",
             LL_HOST_DEADLINE_GRACE_MS / 1000);
}

void ll_lua_host_watch_deadline(lua_State *L) {
  lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 100000);
}

int64_t ll_lua_host_deadline_left_ms(lua_State *L) {
  ll_run *r = host_run(ll_lua_host(L));
  return r ? ll_run_deadline_left_ms(r, LL_HOST_DEADLINE_GRACE_MS) : -1;
}

void ll_lua_host_deadline_now(lua_State *L) {
  if (past_grace(ll_lua_host(L)))
    lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1);
}

static const luaL_Reg run_own[] = {{"close", l_close}, {NULL, NULL}};

void ll_lua_register_run(lua_State *L) {
  luaL_setfuncs(L, run_own, 0);
  if (luaL_newmetatable(L, LL_RUN_MT)) {
    lua_pushvalue(L, -2); /* the methods */
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, l_close_meta);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, l_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, LL_RUN_MT);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot swap methods */
  }
  lua_pop(L, 1);
  /* every method, the writer's and the metamethods but __gc */
  lua_newtable(L);
  for (int t = 0; t < 3; t++) {
    if (t == 0)
      lua_pushvalue(L, -2); /* the Run's methods */
    else if (t == 1)
      luaL_getmetatable(L, LL_RUN_MT);
    else if (luaL_getmetatable(L, LL_WRITER_MT) != LUA_TTABLE ||
             lua_getfield(L, -1, "methods") != LUA_TTABLE)
      return (void)luaL_error(L, "leaselua: the Writer's methods are missing");
    for (lua_pushnil(L); lua_next(L, -2);) {
      if (lua_iscfunction(L, -1) && lua_tocfunction(L, -1) != l_gc) {
        lua_pushboolean(L, 1);
        lua_rawset(L, -5); /* set[method] = true; the key stays */
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pop(L, t == 2 ? 2 : 1);
  }
  lua_rawsetp(L, LUA_REGISTRYINDEX, &methods_key);
  lua_pop(L, 1);
  lua_pushcfunction(L, l_open);
  lua_setfield(L, -2, "open");
}
