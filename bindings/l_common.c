/* Error objects crossing the boundary as tables with a __tostring (as redis
 * scripting does), and small argument helpers. */
#include "l_common.h"

#include <lauxlib.h>

#include "guard.h"

static int error_tostring(lua_State *L) {
  lua_getfield(L, 1, "code");
  lua_getfield(L, 1, "message");
  lua_pushfstring(L, "%s: %s", luaL_optstring(L, -2, "LL_E_INTERNAL"),
                  luaL_optstring(L, -1, ""));
  return 1;
}

void ll_lua_error_mt(lua_State *L) {
  if (luaL_newmetatable(L, LL_ERROR_MT)) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
}

/* Error tables made here are remembered, with their exit code, in a
 * weak-keyed registry table: the host trusts that code, never a field a
 * script could have written into the table. */
static const char errors_key = 'e';

static void remember_error(lua_State *L, int exit_code) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &errors_key) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &errors_key);
  }
  lua_pushvalue(L, -2);
  lua_pushinteger(L, exit_code);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

int ll_lua_error_exit(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  int code = -1;
  if (lua_type(L, idx) != LUA_TTABLE)
    return -1;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &errors_key) == LUA_TTABLE) {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TNUMBER)
      code = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return code;
}

void ll_lua_push_error(lua_State *L, ll_code code, const char *message) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, ll_code_name(code));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, message ? message : "");
  lua_setfield(L, -2, "message");
  lua_pushinteger(L, ll_guard_invariant(code));
  lua_setfield(L, -2, "invariant");
  lua_pushinteger(L, ll_code_exit(code));
  lua_setfield(L, -2, "exit");
  ll_lua_error_mt(L);
  luaL_setmetatable(L, LL_ERROR_MT);
  remember_error(L, ll_code_exit(code));
}

int ll_lua_raise(lua_State *L, ll_code code, const char *message) {
  ll_lua_push_error(L, code, message);
  return lua_error(L);
}

const char *ll_lua_optfield_str(lua_State *L, int idx, const char *k,
                                const char *dflt) {
  if (lua_type(L, idx) != LUA_TTABLE)
    return dflt;
  lua_getfield(L, idx, k);
  const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : dflt;
  if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, "option '%s' must be a string", k);
  lua_pop(L, 1); /* the string stays reachable from the table */
  return v;
}

lua_Integer ll_lua_optfield_int(lua_State *L, int idx, const char *k,
                                lua_Integer dflt) {
  if (lua_type(L, idx) != LUA_TTABLE)
    return dflt;
  lua_getfield(L, idx, k);
  lua_Integer v = dflt;
  if (!lua_isnil(L, -1)) {
    int ok = 0;
    v = lua_tointegerx(L, -1, &ok);
    if (!ok)
      luaL_error(L, "option '%s' must be an integer", k);
  }
  lua_pop(L, 1);
  return v;
}

int ll_lua_optfield_bool(lua_State *L, int idx, const char *k, int dflt) {
  if (lua_type(L, idx) != LUA_TTABLE)
    return dflt;
  lua_getfield(L, idx, k);
  int v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}
