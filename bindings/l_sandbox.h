/* The script sandbox of the host: an allow list of libraries (base,
 * string, table, math, utf8) plus leaselua and the embedded scripts/lib
 * modules; no os, io, debug or package (DESIGN.md invariant 13). */
#ifndef LL_L_SANDBOX_H
#define LL_L_SANDBOX_H

#include <lua.h>

/* The most memory a script's Lua state may hold: past it an allocation
 * fails, and the script gets Lua's "not enough memory" error (which ends
 * the run HOLD if it stops the script), instead of the machine's OOM
 * killer ending leaselua, or something else, at random. */
#define LL_SANDBOX_MEM_MAX ((size_t)1 << 30)

/* A new Lua state whose allocations are bounded by cap bytes, with a
 * panic handler and warnings off, as luaL_newstate's; NULL when out of
 * memory. Close it with ll_sandbox_close. */
lua_State *ll_sandbox_newstate(size_t cap);
/* lua_close, then the bound's own record. */
void ll_sandbox_close(lua_State *L);

/* Opens the allowed libraries and installs `require` for "leaselua" and
 * "lib.<name>" only. */
void ll_sandbox_open(lua_State *L);
/* For stock lua5.4: registers lib.<name> in package.preload. */
void ll_lualib_preload(lua_State *L);

#endif
