/* The leaselua host: runs one script in the sandbox, or a subcommand
 * (verify, report, dev-token). Exit codes: 0 ACCEPT, 1 WAIT, 2 HOLD,
 * 3 RECONCILE (returned by the script), 64 usage or configuration, 70
 * internal. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "http.h"
#include "l_common.h"
#include "l_report.h"
#include "l_sandbox.h"
#include "verify.h"

static const char usage[] =
    "usage: leaselua SCRIPT [args...]   run a script in the sandbox\n"
    "       leaselua verify [--export-only] DIR   check an evidence "
    "directory\n"
    "                                   (exit 0 consistent, 2 inconsistent: "
    "not the decision)\n"
    "       leaselua report DIR         write report.html and summary.md "
    "into DIR\n"
    "       leaselua dev-token [SECS]   print an unsigned JWT for Azurite's "
    "--oauth basic\n"
    "       leaselua --version | --help\n"
    "exit (SCRIPT): 0 ACCEPT, 1 WAIT, 2 HOLD, 3 RECONCILE, 64 usage or "
    "configuration, "
    "70 internal error\n";

static int traceback(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE)
    return 1; /* leaselua error objects travel as they are */
  const char *msg = lua_tostring(L, 1);
  if (!msg)
    msg = luaL_typename(L, 1);
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Prints the error as one line and maps it to an exit code. */
static int report(lua_State *L) {
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_getfield(L, -1, "code");
    lua_getfield(L, -2, "message");
    lua_getfield(L, -3, "exit");
    int code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 70;
    fprintf(stderr, "leaselua: %s: %s\n", luaL_optstring(L, -3, "error"),
            luaL_optstring(L, -2, ""));
    return code;
  }
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "leaselua: %s\n", msg ? msg : "(error object)");
  return 70;
}

static int run_script(int argc, char **argv) {
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "leaselua: out of memory\n");
    return 70;
  }
  ll_sandbox_open(L);
  lua_createtable(L, argc, 1);
  for (int i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  lua_pushcfunction(L, traceback);
  int rc;
  if (luaL_loadfilex(L, argv[1], "t") != LUA_OK) {
    fprintf(stderr, "leaselua: cannot load %s\n", lua_tostring(L, -1));
    rc = 64;
  } else {
    for (int i = 2; i < argc; i++)
      lua_pushstring(L, argv[i]);
    if (lua_pcall(L, argc - 2, 1, 1) != LUA_OK) {
      rc = report(L);
    } else {
      rc = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
      if (rc < 0 || rc > 255)
        rc = 70;
    }
  }
  lua_close(L);
  return rc;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN); /* libcurl with NOSIGNAL does not */
  signal(SIGXFSZ, SIG_IGN); /* a full ledger is an error, not a death */
  if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "-h") == 0) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 64 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("leaselua %s\n%s\n%s\n%s\napi-version %s\n", LL_VERSION, LUA_RELEASE,
           ll_http_curl_version(), ll_http_ssl_version(), LL_API_VERSION);
    return 0;
  }
  if (strcmp(argv[1], "dev-token") == 0) {
    long secs = argc > 2 ? strtol(argv[2], NULL, 10) : 7200;
    if (secs <= 0 || secs > 86400) {
      fprintf(stderr, "leaselua: dev-token lifetime must be 1..86400 s\n");
      return 64;
    }
    char *tok = ll_auth_dev_token((int64_t)time(NULL), secs);
    if (!tok)
      return 70;
    puts(tok);
    free(tok);
    return 0;
  }
  if (strcmp(argv[1], "report") == 0) {
    if (argc != 3) {
      fputs(usage, stderr);
      return 64;
    }
    return ll_report_main(argv[2], stdout, stderr);
  }
  if (strcmp(argv[1], "verify") == 0) /* its own arguments and exit codes */
    return ll_verify_main(argc - 2, argv + 2, stdout, stderr);
  if (argv[1][0] == '-') {
    fprintf(stderr, "leaselua: unknown option %s: see leaselua --help\n",
            argv[1]);
    return 64;
  }
  return run_script(argc, argv);
}
