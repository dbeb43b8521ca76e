/* Shared by the binding files: error objects and small argument helpers. */
#ifndef LL_L_COMMON_H
#define LL_L_COMMON_H

#include <lua.h>

#include "ll.h"

#define LL_ERROR_MT "leaselua.Error"
#define LL_RUN_MT "leaselua.Run"
#define LL_WRITER_MT "leaselua.Writer"

/* Pushes an error table {code, message, invariant} with __tostring. */
void ll_lua_push_error(lua_State *L, ll_code code, const char *message);
/* Raises that error table. Never returns. */
int ll_lua_raise(lua_State *L, ll_code code, const char *message);
/* Registers the error metatable; idempotent. */
void ll_lua_error_mt(lua_State *L);

/* Optional typed fields of the table at idx. */
const char *ll_lua_optfield_str(lua_State *L, int idx, const char *k,
                                const char *dflt);
lua_Integer ll_lua_optfield_int(lua_State *L, int idx, const char *k,
                                lua_Integer dflt);
int ll_lua_optfield_bool(lua_State *L, int idx, const char *k, int dflt);

int luaopen_leaselua_run(lua_State *L); /* adds open/ledger/verify to the
                                           module table at -1 */
int ll_lua_open_module(lua_State *L);   /* luaopen body */
/* Adds the allocation-failure sweep's hooks to the module table on top of
 * the stack in a LEASELUA_FAILALLOC build; nothing otherwise. */
void ll_lua_register_failalloc(lua_State *L);

#endif
