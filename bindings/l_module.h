/* The `leaselua` module table, as the host's sandbox and `require
 * "leaselua"` from stock Lua both open it. */
#ifndef LL_L_MODULE_H
#define LL_L_MODULE_H

#include <lua.h>

/* Pushes the module table: versions, payload, sha256, getenv, isatty,
 * ledger, lease_contract, help, usage_error and open, with the Run and
 * Writer types. */
int ll_lua_open_module(lua_State *L);

#endif
