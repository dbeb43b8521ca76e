/* Builds a run's clock, transport and credential from script options. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "l_common.h"
#include "transport_factory.h"

static void copy_opt(lua_State *L, int idx, const char *k, char *dst,
                     size_t cap) {
  const char *v = ll_lua_optfield_str(L, idx, k, NULL);
  if (v && strlen(v) >= cap)
    luaL_error(L, "option '%s' is too long", k);
  ll_strlcpy(dst, v ? v : "", cap);
}

void ll_transport_config_from_lua(lua_State *L, int idx,
                                  ll_transport_config *tc) {
  memset(tc, 0, sizeof *tc);
  idx = lua_absindex(L, idx);
  copy_opt(L, idx, "ca_file", tc->ca_file, sizeof tc->ca_file);
  copy_opt(L, idx, "replay", tc->replay, sizeof tc->replay);
  copy_opt(L, idx, "record", tc->record, sizeof tc->record);
  copy_opt(L, idx, "record_description", tc->record_description,
           sizeof tc->record_description);
  tc->connect_timeout_ms =
      (long)ll_lua_optfield_int(L, idx, "connect_timeout_ms", 10000);
  tc->total_timeout_ms =
      (long)ll_lua_optfield_int(L, idx, "total_timeout_ms", 60000);
  const char *sas = getenv("AZURE_STORAGE_SAS");
  tc->auth_kind = sas && *sas ? LL_AUTH_SAS : LL_AUTH_TOKEN_ENV;
  lua_getfield(L, idx, "auth");
  if (lua_istable(L, -1)) {
    const char *kind = ll_lua_optfield_str(L, -1, "kind", NULL);
    static const struct {
      const char *name;
      ll_auth_kind kind;
    } kinds[] = {{"env", LL_AUTH_TOKEN_ENV},
                 {"file", LL_AUTH_TOKEN_FILE},
                 {"command", LL_AUTH_TOKEN_COMMAND},
                 {"managed_identity", LL_AUTH_MANAGED_IDENTITY},
                 {"sas", LL_AUTH_SAS},
                 {"none", LL_AUTH_NONE}};
    if (kind) {
      size_t i;
      for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, kind) == 0)
          break;
      if (i == sizeof kinds / sizeof kinds[0])
        luaL_error(L, "auth.kind must be env, file, command, "
                      "managed_identity or sas");
      tc->auth_kind = kinds[i].kind;
    }
    copy_opt(L, -1, "token_file", tc->token_file, sizeof tc->token_file);
    copy_opt(L, -1, "token_command", tc->token_command,
             sizeof tc->token_command);
    copy_opt(L, -1, "imds_endpoint", tc->imds_endpoint,
             sizeof tc->imds_endpoint);
    copy_opt(L, -1, "client_id", tc->client_id, sizeof tc->client_id);
  }
  lua_pop(L, 1);
}

void ll_transport_config_cleanup(ll_transport_config *tc) {
  memset(tc, 0, sizeof *tc);
}

ll_status ll_transport_make(ll_transport_config *tc, const char *url,
                            long long deadline_s, ll_run_config *cfg,
                            ll_error *err) {
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
  if (tc->replay[0] && tc->record[0])
    return ll_fail(err, LL_E_USAGE,
                   "--replay and --record cannot be combined: record from a "
                   "live endpoint");
  if (tc->replay[0]) {
    ll_clock *vclock = NULL;
    ll_transport *rt = ll_fixture_replay_open(tc->replay, account_path, &vclock,
                                              tc->fixture_label,
                                              sizeof tc->fixture_label, err);
    if (!rt)
      return err->code ? err->code : LL_E_PARSE;
    cfg->clock = vclock;
    cfg->auth = NULL; /* a replay needs no credential and sends nothing */
    cfg->transport = rt;
    cfg->fixture_label = tc->fixture_label;
    return LL_OK;
  }
  ll_clock *clock = ll_clock_new_real();
  if (!clock)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  ll_auth_options ao = {0};
  ao.kind = tc->auth_kind;
  ao.token_file = tc->token_file[0] ? tc->token_file : NULL;
  ao.token_command = tc->token_command[0] ? tc->token_command : NULL;
  ao.imds_endpoint = tc->imds_endpoint[0] ? tc->imds_endpoint : NULL;
  ao.client_id = tc->client_id[0] ? tc->client_id : NULL;
  ll_auth *auth =
      ll_auth_new(&ao, clock, ll_clock_utc_ms(clock) + deadline_s * 1000, err);
  if (!auth) {
    ll_clock_free(clock);
    return err->code ? err->code : LL_E_AUTH;
  }
  ll_http_options ho = {0};
  ho.ca_file = tc->ca_file[0] ? tc->ca_file : NULL;
  ho.connect_timeout_ms = tc->connect_timeout_ms;
  ho.total_timeout_ms = tc->total_timeout_ms;
  ll_transport *t = ll_http_new(&ho, clock, err);
  if (t && tc->record[0])
    t = ll_fixture_record_new(
        t, tc->record, clock, account_path, NULL,
        tc->record_description[0] ? tc->record_description : NULL, err);
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
