/* `require "leaselua"` from stock lua5.4: the same bindings as the host,
 * plus scripts/lib in package.preload. No sandbox: the caller owns it. */
#include <lua.h>

#include "l_module.h"
#include "l_sandbox.h"

int luaopen_leaselua(lua_State *L);

int luaopen_leaselua(lua_State *L) {
  ll_lualib_preload(L);
  return ll_lua_open_module(L);
}
