/* Test builds only (-DLEASELUA_FAILALLOC=ON): the allocation-failure
 * sweep's hooks. */
#ifndef LL_L_FAILALLOC_H
#define LL_L_FAILALLOC_H

#include <lua.h>

/* In a LEASELUA_FAILALLOC build, offers the sweep's hooks as
 * package.preload["leaselua.failalloc"]; nothing otherwise. */
void ll_lua_register_failalloc(lua_State *L);

#endif
