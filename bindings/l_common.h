/* Shared by the binding files: error objects, and the readers every value
 * from Lua goes through on its way into C. */
#ifndef LL_L_COMMON_H
#define LL_L_COMMON_H

#include <lua.h>
#include <stddef.h>

#include "ll.h"

#define LL_ERROR_MT "leaselua.Error"
#define LL_RUN_MT "leaselua.Run"
#define LL_WRITER_MT "leaselua.Writer"

/* Capacities (with the NUL) of the strings the bindings copy in. */
#define LL_LUA_LABEL_CAP 96            /* a step label (core keeps 95 bytes) */
#define LL_LUA_ALIAS_CAP LL_ALIAS_MAX  /* a writer alias (ll.h) */
#define LL_LUA_REASON_CAP 256          /* a lifecycle reason */
#define LL_LUA_TEXT_CAP 4096           /* a note's text */
#define LL_LUA_PATH_CAP 4096           /* a path (PATH_MAX) */
#define LL_LUA_REVISION_MAX 2147483647 /* a payload revision: 0..2^31-1 */

/* Pushes an error table {code, message, invariant, exit} with __tostring,
 * and records its code in C, where a script cannot rewrite it. */
void ll_lua_push_error(lua_State *L, ll_code code, const char *message);
/* Raises that error table. Never returns. */
int ll_lua_raise(lua_State *L, ll_code code, const char *message);
/* The same with a printf-style message (cut at 1023 bytes, like
 * ll_error). */
int ll_lua_raisef(lua_State *L, ll_code code, const char *fmt, ...);
/* Registers the error metatable; idempotent. */
void ll_lua_error_mt(lua_State *L);
/* 1 when the value at idx is an error table made by ll_lua_push_error,
 * with *code the code recorded when it was made; 0 for anything else.
 * Raw access only: never runs a metamethod, never raises. */
int ll_lua_error_code(lua_State *L, int idx, ll_code *code);
/* Pushes "CODE: message" for the table at idx by raw access only (no
 * metamethod runs): CODE is the code C recorded when it made the table,
 * else its string field code, else no_code; message its string field
 * message, else no_message. Never raises. */
/* A message handler for lua_pcall: a string gets its traceback; a table's
 * raw code and message are used, and nothing of the value runs (no
 * __tostring, no __index: a handler that raises is a lost result). */
int ll_lua_traceback(lua_State *L);
void ll_lua_push_error_line(lua_State *L, int idx, const char *no_code,
                            const char *no_message);
/* The exit code of an error table made by ll_lua_push_error (whatever a
 * script wrote into its fields since), or -1 for any other value. */
int ll_lua_error_exit(lua_State *L, int idx);

/* Arguments and option tables. Every reader uses raw access, so no
 * metamethod of a script's value ever runs, and copies strings into the
 * caller's buffer, so C never holds a pointer into a value the collector
 * may free. Misuse raises LL_E_USAGE with one line naming fn (e.g.
 * "run:put"), the argument or option, what it must be and what it was. */

/* The handle at idx, or raises naming fn and the expected type mt. */
void *ll_lua_check_handle(lua_State *L, int idx, const char *mt,
                          const char *fn);
/* Field key of the option table at idx (none or nil: no options). Returns
 * 1 and copies the string into buf when present, 0 (buf left as it is)
 * when absent; raises when it is not a string, holds a NUL byte or does
 * not fit in cap - 1 bytes. */
int ll_lua_opt_str(lua_State *L, int idx, const char *fn, const char *key,
                   char *buf, size_t cap);
/* An integer in lo..hi, or dflt when absent. NaN, infinities, fractions,
 * strings and values outside lo..hi raise. */
lua_Integer ll_lua_opt_int(lua_State *L, int idx, const char *fn,
                           const char *key, lua_Integer dflt, lua_Integer lo,
                           lua_Integer hi);
/* true or false, or dflt when absent; any other type raises. */
int ll_lua_opt_bool(lua_State *L, int idx, const char *fn, const char *key,
                    int dflt);
/* Argument idx as a string copied into buf: 1 when given, 0 when none or
 * nil and !required (buf left as it is); raises as ll_lua_opt_str. */
int ll_lua_arg_str(lua_State *L, int idx, const char *fn, const char *name,
                   char *buf, size_t cap, int required);
/* Argument idx as an integer in lo..hi (required). */
lua_Integer ll_lua_arg_int(lua_State *L, int idx, const char *fn,
                           const char *name, lua_Integer lo, lua_Integer hi);

#endif
