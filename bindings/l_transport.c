/* Builds a run's clock, transport and credential from the operator's
 * configuration, and reads that configuration from the embedding API's
 * leaselua.open table. */
#include "l_transport.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "l_common.h"

/* Pushes t[k] without metamethods; returns its type. */
static int rawfield(lua_State *L, int idx, const char *k) {
  lua_pushstring(L, k);
  return lua_rawget(L, idx);
}

static void bad(lua_State *L, const char *k, const char *what) {
  char msg[160];
  snprintf(msg, sizeof msg, "leaselua.open option '%s' %s", k, what);
  ll_lua_raise(L, LL_E_USAGE, msg);
}

static void copy_str(lua_State *L, int idx, const char *k, char *dst,
                     size_t cap) {
  int t = rawfield(L, idx, k);
  if (t == LUA_TSTRING) {
    size_t n;
    const char *v = lua_tolstring(L, -1, &n);
    if (n >= cap || strlen(v) != n)
      bad(L, k, "is too long or holds a NUL byte");
    memcpy(dst, v, n + 1);
  } else if (t != LUA_TNIL) {
    bad(L, k, "must be a string");
  }
  lua_pop(L, 1);
}

static long copy_int(lua_State *L, int idx, const char *k, long dflt, long lo,
                     long hi) {
  long v = dflt;
  int t = rawfield(L, idx, k);
  if (t != LUA_TNIL) {
    int ok = 0;
    lua_Integer n = t == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
    if (!ok || n < lo || n > hi)
      bad(L, k, "must be an integer in range");
    v = (long)n;
  }
  lua_pop(L, 1);
  return v;
}

static int copy_bool(lua_State *L, int idx, const char *k) {
  int t = rawfield(L, idx, k);
  int v = t == LUA_TBOOLEAN && lua_toboolean(L, -1);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    bad(L, k, "must be a boolean");
  lua_pop(L, 1);
  return v;
}

void ll_operator_from_lua(lua_State *L, int idx, ll_operator *op) {
  idx = lua_absindex(L, idx);
  copy_str(L, idx, "account_url", op->account_url, sizeof op->account_url);
  copy_str(L, idx, "container", op->container, sizeof op->container);
  copy_str(L, idx, "blob", op->blob, sizeof op->blob);
  copy_str(L, idx, "evidence", op->evidence, sizeof op->evidence);
  copy_str(L, idx, "ca_file", op->ca_file, sizeof op->ca_file);
  copy_str(L, idx, "replay", op->replay, sizeof op->replay);
  copy_str(L, idx, "record", op->record, sizeof op->record);
  copy_str(L, idx, "record_description", op->record_description,
           sizeof op->record_description);
  copy_str(L, idx, "after", op->after, sizeof op->after);
  copy_str(L, idx, "api_version", op->api_version, sizeof op->api_version);
  /* resolved by ll_operator_finish like --proxy / --no-proxy; the
   * embedding API reads no proxy variable, so none is none */
  copy_str(L, idx, "proxy", op->proxy_opt, sizeof op->proxy_opt);
  copy_str(L, idx, "no_proxy", op->no_proxy_opt, sizeof op->no_proxy_opt);
  op->allow_api_version = copy_bool(L, idx, "allow_api_version");
  if (rawfield(L, idx, "manifest") == LUA_TSTRING)
    copy_str(L, idx, "manifest", op->manifest, sizeof op->manifest);
  lua_pop(L, 1);
  op->recover = copy_bool(L, idx, "recover");
  op->destructive = copy_bool(L, idx, "destructive");
  op->connect_timeout_ms =
      copy_int(L, idx, "connect_timeout_ms", op->connect_timeout_ms, 1, 600000);
  op->total_timeout_ms =
      copy_int(L, idx, "total_timeout_ms", op->total_timeout_ms, 1, 600000);
  op->deadline_s = copy_int(L, idx, "deadline_s", op->deadline_s, 1, 86400);
  op->max_single_put = (size_t)copy_int(L, idx, "max_single_put", 0, 0,
                                        (long)LL_MAX_SINGLE_PUT * 64);
  copy_str(L, idx, "credential_a", op->cred_a, sizeof op->cred_a);
  copy_str(L, idx, "credential_b", op->cred_b, sizeof op->cred_b);
  copy_str(L, idx, "credential_operator", op->cred_operator,
           sizeof op->cred_operator);
  copy_str(L, idx, "credential_observer", op->cred_observer,
           sizeof op->cred_observer);
  int t = rawfield(L, idx, "auth");
  if (t == LUA_TTABLE) {
    int a = lua_gettop(L);
    char kind[32] = "";
    copy_str(L, a, "kind", kind, sizeof kind);
    static const struct {
      const char *name;
      ll_auth_kind kind;
    } kinds[] = {{"env", LL_AUTH_TOKEN_ENV},
                 {"file", LL_AUTH_TOKEN_FILE},
                 {"command", LL_AUTH_TOKEN_COMMAND},
                 {"managed_identity", LL_AUTH_MANAGED_IDENTITY},
                 {"sas", LL_AUTH_SAS},
                 {"none", LL_AUTH_NONE}};
    if (kind[0]) {
      size_t i;
      for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, kind) == 0)
          break;
      if (i == sizeof kinds / sizeof kinds[0])
        ll_lua_raise(L, LL_E_USAGE,
                     "auth.kind must be env, file, command, managed_identity "
                     "or sas");
      op->auth_kind = kinds[i].kind;
    }
    copy_str(L, a, "token_file", op->token_file, sizeof op->token_file);
    copy_str(L, a, "token_command", op->token_command,
             sizeof op->token_command);
    copy_str(L, a, "imds_endpoint", op->imds_endpoint,
             sizeof op->imds_endpoint);
    copy_str(L, a, "client_id", op->client_id, sizeof op->client_id);
  } else if (t != LUA_TNIL) {
    bad(L, "auth", "must be a table");
  }
  lua_pop(L, 1);
}

/* The header of a recording: the operator's target, and the flow the
 * host runs (its script's file name and own arguments) when there is one. */
static ll_status record_context(ll_transport *t, const ll_operator *op,
                                const ll_fixture_context *flow, ll_error *err) {
  static ll_fixture_context c; /* large; one run per process */
  memset(&c, 0, sizeof c);
  if (flow && flow->has_flow)
    c = *flow;
  c.has_target = ll_strlcpy(c.container, op->container, sizeof c.container) &&
                 ll_strlcpy(c.blob, op->blob, sizeof c.blob);
  return ll_fixture_record_context(t, &c, err);
}

ll_status ll_transport_make(const ll_operator *op, ll_run_config *cfg,
                            const ll_fixture_context *flow, char *label,
                            size_t label_cap, ll_error *err) {
  const char *url = op->account_url;
  ll_status st = ll_http_check_url(url, err);
  if (st != LL_OK) {
    ll_error inner = *err;
    return ll_fail(err, st,
                   "account URL (AZURE_STORAGE_ACCOUNT_URL): %s: give "
                   "https://<account>.blob.core.windows.net",
                   inner.message);
  }
  char account_path[512];
  ll_fixture_account_path(url, account_path, sizeof account_path);
  if (op->replay[0] && op->record[0])
    return ll_fail(err, LL_E_USAGE,
                   "--replay and --record cannot be combined: record from a "
                   "live endpoint");
  if (op->replay[0]) {
    ll_clock *vclock = NULL;
    ll_transport *rt = ll_fixture_replay_open(op->replay, account_path, &vclock,
                                              label, label_cap, err);
    if (!rt)
      return err->code ? err->code : LL_E_PARSE;
    cfg->clock = vclock;
    cfg->auth = NULL; /* a replay needs no credential and sends nothing */
    cfg->transport = rt;
    cfg->fixture_label = label;
    return LL_OK;
  }
  ll_clock *clock = ll_clock_new_real();
  if (!clock)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  ll_auth *auth = NULL;
  if (op->auth_kind != LL_AUTH_NONE || !op->no_default) {
    ll_auth_options ao = {0};
    ao.kind = op->auth_kind;
    ao.token_file = op->token_file[0] ? op->token_file : NULL;
    ao.token_command = op->token_command[0] ? op->token_command : NULL;
    ao.imds_endpoint = op->imds_endpoint[0] ? op->imds_endpoint : NULL;
    ao.client_id = op->client_id[0] ? op->client_id : NULL;
    auth = ll_auth_new(&ao, clock,
                       ll_clock_utc_ms(clock) + op->deadline_s * 1000LL, err);
    if (!auth) {
      ll_clock_free(clock);
      return err->code ? err->code : LL_E_AUTH;
    }
  }
  ll_http_options ho = {0};
  ho.ca_file = op->ca_file[0] ? op->ca_file : NULL;
  ho.connect_timeout_ms = op->connect_timeout_ms;
  ho.total_timeout_ms = op->total_timeout_ms;
  ho.proxy = op->proxy.url;
  ho.noproxy = op->proxy.noproxy[0] ? op->proxy.noproxy : NULL;
  ll_transport *t = ll_http_new(&ho, clock, err);
  if (t && op->record[0])
    t = ll_fixture_record_new(
        t, op->record, clock, account_path, NULL,
        op->record_description[0] ? op->record_description : NULL, err);
  if (t && op->record[0] && record_context(t, op, flow, err) != LL_OK) {
    ll_transport_free(t);
    t = NULL;
  }
  if (!t) {
    ll_auth_free(auth);
    ll_clock_free(clock);
    return err->code ? err->code : LL_E_INTERNAL;
  }
  cfg->clock = clock;
  cfg->auth = auth;
  cfg->transport = t;
  return LL_OK;
}

ll_status ll_transport_actors(const ll_operator *op, const cJSON *manifest,
                              const ll_flow_plan *plan, ll_cred_config *creds,
                              ll_run_config *cfg, ll_error *err) {
  const char *const spec[LL_ACTOR__COUNT] = {
      op->cred_a, op->cred_b, op->cred_operator, op->cred_observer};
  ll_status st = ll_cred_config_read(creds, spec, manifest, err);
  int live = !cfg->fixture_label;
  creds->imds_endpoint = op->imds_endpoint[0] ? op->imds_endpoint : NULL;
  ll_cred_default_source(op->auth_kind, op->token_file, op->client_id,
                         creds->default_source, sizeof creds->default_source);
  cfg->auth_source = cfg->auth ? creds->default_source : NULL;
  if (st == LL_OK && live && !cfg->auth && !creds->any) /* nothing at all */
    st = ll_fail(err,
                 op->no_default_err.code ? op->no_default_err.code : LL_E_AUTH,
                 "%s", op->no_default_err.message);
  if (st == LL_OK && live)
    st = ll_cred_config_check(creds, (const char(*)[16])plan->actors,
                              plan->nactors, cfg->auth != NULL, err);
  if (st == LL_OK && live && creds->any)
    st = ll_cred_config_build(creds, cfg->clock,
                              ll_clock_utc_ms(cfg->clock) +
                                  op->deadline_s * 1000LL,
                              cfg->actor_auth, err);
  for (int s = 0; st == LL_OK && s < LL_ACTOR__COUNT; s++)
    cfg->actor_source[s] = creds->actor[s].source;
  cfg->actors = (const char(*)[16])plan->actors;
  cfg->nactors = plan->nactors;
  return st;
}
