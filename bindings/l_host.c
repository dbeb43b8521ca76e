/* The host's state, in the registry under a key only C holds (the sandbox
 * has no debug library, so a script never reaches the registry). */
#include "l_host.h"

#include <lauxlib.h>

static const char host_key = 'h';

void ll_lua_host_install(lua_State *L, ll_host *h) {
  lua_pushlightuserdata(L, h);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &host_key);
}

ll_host *ll_lua_host(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &host_key);
  ll_host *h = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return h;
}
