/* The `leaselua` module table: versions, payloads and hashes, a narrow
 * environment reader, ledger reading, and leaselua.open. */
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "auth.h"
#include "hash.h"
#include "http.h"
#include "l_common.h"
#include "l_json.h"
#include "l_run.h"
#include "ledger.h"
#include "payload.h"

/* leaselua.versions() -> {leaselua, lua, libcurl, openssl, api_version} */
static int l_versions(lua_State *L) {
  lua_createtable(L, 0, 5);
  lua_pushstring(L, LL_VERSION);
  lua_setfield(L, -2, "leaselua");
  lua_pushstring(L, LUA_RELEASE);
  lua_setfield(L, -2, "lua");
  lua_pushstring(L, ll_http_curl_version());
  lua_setfield(L, -2, "libcurl");
  lua_pushstring(L, ll_http_ssl_version());
  lua_setfield(L, -2, "openssl");
  lua_pushstring(L, LL_API_VERSION);
  lua_setfield(L, -2, "api_version");
  return 1;
}

/* leaselua.payload(revision, writer) -> bytes, sha256 (raises on bad input) */
static int l_payload(lua_State *L) {
  lua_Integer rev = luaL_checkinteger(L, 1);
  const char *writer = luaL_checkstring(L, 2);
  ll_payload p;
  ll_error err = {0};
  if (ll_payload_build((long)rev, writer, &p, &err) != LL_OK)
    return ll_lua_raise(L, err.code, err.message);
  lua_pushlstring(L, p.bytes, p.len);
  lua_pushstring(L, p.sha256);
  return 2;
}

/* leaselua.sha256(s) -> lowercase hex */
static int l_sha256(lua_State *L) {
  size_t len;
  const char *s = luaL_checklstring(L, 1, &len);
  char hex[LL_SHA256_HEX];
  if (ll_sha256_hex(s, len, hex) != LL_OK)
    return ll_lua_raise(L, LL_E_INTERNAL, "SHA-256 failed");
  lua_pushstring(L, hex);
  return 1;
}

/* Scripts may read the target and presentation variables, never a
 * credential: tokens and SAS stay in C. */
static const char *const env_allowed[] = {"AZURE_STORAGE_ACCOUNT_URL",
                                          "AZURE_STORAGE_CONTAINER",
                                          "AZURE_STORAGE_BLOB",
                                          "LEASELUA_CA_FILE",
                                          "LEASELUA_EVIDENCE_ROOT",
                                          "NO_COLOR",
                                          "TERM",
                                          "AZURITE_VERSION",
                                          "LEASELUA_PAUSE_AFTER",
                                          NULL};

/* leaselua.getenv(name) -> value | nil; raises for names outside the
 * allow list. */
static int l_getenv(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  for (const char *const *p = env_allowed; *p; p++) {
    if (strcmp(*p, name) == 0) {
      const char *v = getenv(name);
      if (v && *v)
        lua_pushstring(L, v);
      else
        lua_pushnil(L);
      return 1;
    }
  }
  return luaL_argerror(L, 1, "not a variable scripts may read");
}

/* leaselua.isatty() -> true when stdout is a terminal */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty(1));
  return 1;
}

/* leaselua.ledger(dir) -> array of export rows | nil, err. The chain is
 * checked; a broken chain is an error naming the row. */
static int l_ledger(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, dir);
  luaL_addstring(&b, "/export/ledger.jsonl");
  luaL_pushresult(&b);
  cJSON *rows = NULL;
  long bad = 0;
  ll_error err = {0};
  ll_status st = ll_ledger_read_file(lua_tostring(L, -1), &rows, &bad, &err);
  if (st != LL_OK) {
    cJSON_Delete(rows);
    lua_pushnil(L);
    ll_lua_push_error(L, st, err.message);
    return 2;
  }
  ll_lua_push_json(L, rows);
  cJSON_Delete(rows);
  return 1;
}

static const luaL_Reg funcs[] = {{"versions", l_versions},
                                 {"payload", l_payload},
                                 {"sha256", l_sha256},
                                 {"getenv", l_getenv},
                                 {"isatty", l_isatty},
                                 {"ledger", l_ledger},
                                 {NULL, NULL}};

int ll_lua_open_module(lua_State *L) {
  ll_alloc_init(); /* cJSON counts its failed allocations from here on */
  ll_lua_error_mt(L);
  luaL_newlib(L, funcs);
  lua_pushliteral(L, "leaselua");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, LL_VERSION);
  lua_setfield(L, -2, "_VERSION");
  ll_lua_register_run(L);
  ll_lua_register_failalloc(L); /* test builds only */
  return 1;
}
