/* The host's state, in the registry under a key only C holds (the sandbox
 * has no debug library, so a script never reaches the registry). */
#include "l_host.h"

#include <lauxlib.h>

#include "model.h"

static const char host_key = 'h';

void ll_lua_host_install(lua_State *L, ll_host *h) {
  lua_pushlightuserdata(L, h);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &host_key);
}

int ll_lua_host_exit(int decision, int stop_exit) {
  if (stop_exit == 64 || stop_exit == 2)
    return stop_exit;
  switch (decision) {
  case LL_DEC_ACCEPT:
    return 0;
  case LL_DEC_WAIT:
    return 1;
  case LL_DEC_RECONCILE:
    return 3;
  default:
    return 2; /* HOLD */
  }
}

ll_host *ll_lua_host(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &host_key);
  ll_host *h = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return h;
}
