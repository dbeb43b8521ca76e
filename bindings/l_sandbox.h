/* The script sandbox of the host: an allow list of libraries (base,
 * string, table, math, utf8) plus leaselua and the embedded scripts/lib
 * modules; no os, io, debug or package (DESIGN.md invariant 13). */
#ifndef LL_L_SANDBOX_H
#define LL_L_SANDBOX_H

#include <lua.h>

/* Opens the allowed libraries and installs `require` for "leaselua" and
 * "lib.<name>" only. */
void ll_sandbox_open(lua_State *L);
/* For stock lua5.4: registers lib.<name> in package.preload. */
void ll_lualib_preload(lua_State *L);

#endif
