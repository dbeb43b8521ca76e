/* Test builds only (-DLEASELUA_FAILALLOC=ON): the hooks of the
 * allocation-failure sweep (tests/failalloc/sweep.lua), as the module
 * `require "leaselua.failalloc"` (package.preload), so the leaselua table
 * itself is the same as a release's. A release has none of this. */
#include "l_failalloc.h"

#ifdef LEASELUA_FAILALLOC
#include <lauxlib.h>

#include "alloc.h"
#include "l_common.h"
#include "verify.h"

/* failalloc.arm(n): the nth counted allocation from now fails, once;
 * 0 disarms. Returns the allocations seen and whether the armed one failed,
 * since the previous arm. */
static int l_failalloc(lua_State *L) {
  lua_Integer n =
      ll_lua_arg_int(L, 1, "failalloc.arm", "the allocation number (0 disarms)",
                     0, LUA_MAXINTEGER);
  unsigned long seen = ll_failalloc_count();
  int fired = ll_failalloc_fired();
  ll_failalloc_arm((unsigned long)n);
  lua_pushinteger(L, (lua_Integer)seen);
  lua_pushboolean(L, fired);
  return 2;
}

/* failalloc.allocs() -> allocations since the last arm, fired */
static int l_allocs(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)ll_failalloc_count());
  lua_pushboolean(L, ll_failalloc_fired());
  return 2;
}

/* failalloc.verify(dir[, export_only]) -> code name, message, decision:
 * ll_verify_dir in-process ("LL_OK" when consistent). */
static int l_verify(lua_State *L) {
  char dir[LL_LUA_PATH_CAP];
  ll_lua_arg_str(L, 1, "failalloc.verify", "the evidence directory", dir,
                 sizeof dir, 1);
  int export_only = lua_toboolean(L, 2);
  ll_verify_report rep;
  ll_error err = {0};
  ll_status st = ll_verify_dir_mode(
      dir, export_only ? LL_VERIFY_EXPORT_ONLY : LL_VERIFY_FULL, &rep, &err);
  lua_pushstring(L, ll_code_name(st));
  lua_pushstring(L, st == LL_OK ? ""
                                : (rep.problem[0] ? rep.problem : err.message));
  lua_pushstring(L, rep.decision);
  return 3;
}

/* failalloc.leakcheck() -> true when LeakSanitizer finds memory leaked
 * so far (and prints it); false without one, or without ASan. Lets the
 * sweep name the N that leaked, not only the process. */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif
static int l_leakcheck(lua_State *L) {
#ifdef __SANITIZE_ADDRESS__
  lua_pushboolean(L, __lsan_do_recoverable_leak_check() != 0);
#else
  lua_pushboolean(L, 0);
#endif
  return 1;
}

static int open_failalloc(lua_State *L) {
  static const luaL_Reg f[] = {{"arm", l_failalloc},
                               {"allocs", l_allocs},
                               {"verify", l_verify},
                               {"leakcheck", l_leakcheck},
                               {NULL, NULL}};
  luaL_newlib(L, f);
  return 1;
}

void ll_lua_register_failalloc(lua_State *L) {
  int top = lua_gettop(L);
  if (lua_getglobal(L, "package") == LUA_TTABLE &&
      lua_getfield(L, -1, "preload") == LUA_TTABLE) {
    lua_pushcfunction(L, open_failalloc);
    lua_setfield(L, -2, "leaselua.failalloc");
  }
  lua_settop(L, top);
}
#else
void ll_lua_register_failalloc(lua_State *L) {
  (void)L;
}
#endif
