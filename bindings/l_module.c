/* The `leaselua` module table: versions, payloads and hashes, a narrow
 * environment reader, ledger reading, the lease contract, and
 * leaselua.open. */
#include "l_module.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "alloc.h"
#include "auth.h"
#include "hash.h"
#include "http.h"
#include "l_common.h"
#include "l_contract.h"
#include "l_failalloc.h"
#include "l_host.h"
#include "l_json.h"
#include "l_lease.h"
#include "l_request.h"
#include "l_run.h"
#include "l_run_flow.h"
#include "ledger.h"
#include "operator.h"
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
  const char *fn = "leaselua.payload";
  lua_Integer rev =
      ll_lua_arg_int(L, 1, fn, "the revision", 0, LL_LUA_REVISION_MAX);
  char writer[LL_LUA_ALIAS_CAP];
  ll_lua_arg_str(L, 2, fn, "the writer (1 to 15 of [A-Za-z0-9_-])", writer,
                 sizeof writer, 1);
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
  if (lua_type(L, 1) != LUA_TSTRING)
    return ll_lua_raise(L, LL_E_USAGE, "leaselua.sha256: pass a string");
  size_t len;
  const char *s = lua_tolstring(L, 1, &len); /* argument slot: stays put */
  char hex[LL_SHA256_HEX];
  if (ll_sha256_hex(s, len, hex) != LL_OK)
    return ll_lua_raise(L, LL_E_INTERNAL, "SHA-256 failed");
  lua_pushstring(L, hex);
  return 1;
}

/* Scripts may read presentation variables only: the target, credentials
 * and files are the operator's, read in C (core/operator.h). */
static const char *const env_allowed[] = {"NO_COLOR", "TERM", "COLUMNS",
                                          "LEASELUA_PAUSE_AFTER", NULL};

/* leaselua.getenv(name) -> value | nil; raises for names outside the
 * allow list. */
static int l_getenv(lua_State *L) {
  char name[64];
  ll_lua_arg_str(L, 1, "leaselua.getenv", "name", name, sizeof name, 1);
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
  return ll_lua_raisef(L, LL_E_USAGE,
                       "leaselua.getenv: %s is not a variable scripts may "
                       "read (only NO_COLOR, TERM, COLUMNS, "
                       "LEASELUA_PAUSE_AFTER)",
                       name);
}

/* leaselua.columns() -> the width of stdout's terminal; without one,
 * COLUMNS if it is sane, else 80 */
static int l_columns(lua_State *L) {
  struct winsize ws;
  long n = 80;
  if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    n = ws.ws_col;
  } else {
    const char *c = getenv("COLUMNS");
    long v = c ? strtol(c, NULL, 10) : 0;
    if (v >= 20 && v <= 1000)
      n = v;
  }
  lua_pushinteger(L, n);
  return 1;
}

/* leaselua.isatty() -> true when stdout is a terminal */
static int l_isatty(lua_State *L) {
  lua_pushboolean(L, isatty(1));
  return 1;
}

/* leaselua.ledger(dir) -> array of export rows | nil, err. The chain is
 * checked; a broken chain is an error naming the row. The embedding API
 * only: a sandboxed script reads its own run's rows (run:rows()), never a
 * path it chose. */
static int l_ledger(lua_State *L) {
  if (ll_lua_host(L))
    return ll_lua_raise(L, LL_E_USAGE,
                        "leaselua.ledger reads a path: a script reads its own "
                        "run's rows with run:rows()");
  char dir[LL_LUA_PATH_CAP];
  ll_lua_arg_str(L, 1, "leaselua.ledger", "dir", dir, sizeof dir, 1);
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

/* leaselua.help(text): prints the script's usage to stdout; a script that
 * only did this exits 0 (it opened no run, so nothing is claimed). */
static const char *text_arg(lua_State *L, const char *fn, size_t *n) {
  if (lua_type(L, 1) != LUA_TSTRING)
    ll_lua_raisef(L, LL_E_USAGE, "%s: argument 1 must be a string, got %s", fn,
                  luaL_typename(L, 1));
  const char *s = lua_tolstring(L, 1, n); /* stays on the stack */
  if (*n > 65536)
    ll_lua_raisef(L, LL_E_USAGE, "%s: the text is longer than 64 KiB", fn);
  return s;
}

static int l_help(lua_State *L) {
  size_t n = 0;
  const char *text = text_arg(L, "leaselua.help", &n);
  fwrite(text, 1, n, stdout);
  if (n == 0 || text[n - 1] != '\n')
    fputc('\n', stdout);
  ll_host *h = ll_lua_host(L);
  if (h) {
    /* what the host itself accepts before the script sees its arguments */
    ll_buf b = {0};
    ll_operator_usage(&b);
    if (b.p)
      fprintf(stdout, "\n%s", b.p);
    free(b.p);
    h->help = 1;
  }
  return 0;
}

/* leaselua.usage_error(message): raises the usage error (exit 64) a flow
 * gives for a bad argument of its own. */
static int l_usage_error(lua_State *L) {
  size_t n = 0;
  const char *msg = text_arg(L, "leaselua.usage_error", &n);
  char buf[600];
  snprintf(buf, sizeof buf, "%.*s", (int)(n < 590 ? n : 590), msg);
  return ll_lua_raise(L, LL_E_USAGE, buf);
}

/* leaselua.fixture_args() -> the flow arguments the replayed fixture
 * recorded for this script (lib.cli.parse merges them), or nil: no replay,
 * a fixture that recorded none or another script's, or the stock module.
 * The operator chose the fixture; its flow arguments are the script's own. */
static int l_fixture_args(lua_State *L) {
  ll_host *h = ll_lua_host(L);
  const ll_fixture_context *c = h ? h->recorded : NULL;
  if (!c || !c->has_flow) {
    lua_pushnil(L);
    return 1;
  }
  lua_createtable(L, c->nargs, 0);
  for (int i = 0; i < c->nargs; i++) {
    lua_pushstring(L, c->args[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static const luaL_Reg funcs[] = {{"fixture_args", l_fixture_args},
                                 {"versions", l_versions},
                                 {"help", l_help},
                                 {"lease_plan", ll_lua_lease_plan},
                                 {"usage_error", l_usage_error},
                                 {"payload", l_payload},
                                 {"sha256", l_sha256},
                                 {"getenv", l_getenv},
                                 {"isatty", l_isatty},
                                 {"columns", l_columns},
                                 {"ledger", l_ledger},
                                 {"lease_contract", ll_lua_lease_contract},
                                 {NULL, NULL}};

int ll_lua_open_module(lua_State *L) {
  ll_alloc_init(); /* cJSON counts its failed allocations from here on */
  ll_lua_error_mt(L);
  luaL_newlib(L, funcs);
  lua_pushliteral(L, "leaselua");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, LL_VERSION);
  lua_setfield(L, -2, "_VERSION");
  lua_newtable(L); /* the Run's methods, from the files that define them */
  ll_lua_request_methods(L);
  ll_lua_run_flow_methods(L);
  ll_lua_lease_methods(L);
  ll_lua_register_run(L);
  /* test builds only, and never under the host: a sandboxed script's own
   * `package` table would carry the fault injector to it (helper-27) */
  if (!ll_lua_host(L))
    ll_lua_register_failalloc(L);
  return 1;
}
