/* The sandbox side of compare, qualify and the JUnit reports: lib.*
 * calls with cJSON arguments, the JSON that comes back, the outputs. */
#ifndef LL_L_BUNDLE_LUA_H
#define LL_L_BUNDLE_LUA_H

#include <stdio.h>

#include <cjson/cJSON.h>
#include <lua.h>

/* A fresh sandbox for the renderers, or NULL (a line on errs). */
lua_State *ll_bundle_state(FILE *errs);

/* Calls lib.<module>.<fn>(args[0], ..., args[nargs-1]) under lua_pcall,
 * each argument pushed from cJSON (NULL: nil), leaving nres results on
 * the stack. Returns 0, or 70 with the error on errs. */
int ll_bundle_call(lua_State *L, const char *cmd, const char *module,
                   const char *fn, const cJSON *const *args, int nargs,
                   int nres, FILE *errs);

/* ll_bundle_call with args[rows_arg - 1] a bundle's export rows, passed
 * as the records and fields lib.bundle reads. */
int ll_bundle_call_rows(lua_State *L, const char *cmd, const char *module,
                        const char *fn, const cJSON *const *args, int nargs,
                        int nres, int rows_arg, FILE *errs);

/* The exit code in the render result at res (raw access): 0, 1 or 2, the
 * codes compare and qualify document for what they found; anything else
 * (missing, not an integer, out of range) is 70, internal error. */
int ll_bundle_exit(lua_State *L, int res);
/* compare's and qualify's last step: a fresh sandbox in *L (the caller
 * closes it, whatever the result), lib.<module>.render(sums, opts), and
 * the result's html field written to html when the operator named one.
 * 0 with the result table on top of *L, or 70 (a line on errs). */
int ll_bundle_render(const char *cmd, const char *module, const cJSON *sums,
                     const cJSON *opts, const char *html, lua_State **L,
                     FILE *out, FILE *errs);

/* The string field key of the table at idx through ll_bundle_emit (to
 * path, or out when path is NULL). 0, or 70 when it is missing or cannot
 * be emitted. */
int ll_bundle_emit_field(lua_State *L, int idx, const char *key,
                         const char *cmd, const char *path, FILE *out,
                         FILE *errs);

/* Writes len bytes of text to path (an operator's file): a temporary file
 * beside it, fsync'd, renamed over it. 0, or 64 (a line on errs). */
int ll_bundle_write_file(const char *cmd, const char *path, const char *text,
                         size_t len, FILE *errs);

/* text, unless the secret scan finds one in it (then a line on errs and
 * 70): written to path (ll_bundle_write_file) or, path NULL, to out. */
int ll_bundle_emit(const char *cmd, const char *path, const char *text,
                   size_t len, FILE *out, FILE *errs);

/* Turns, throughout j, an empty object under a name that always holds a
 * list (changed, only_a, runs, why, ...) into an empty array: Lua has
 * one empty table for both. */
void ll_bundle_fix_lists(cJSON *j);
/* The Lua value at idx (raw access) as one JSON line through
 * ll_bundle_emit on out, lists fixed as above and every object's members
 * in key order (the same bytes from run to run). 0; or 70 with one line on
 * errs naming cmd and what (a value JSON cannot hold, out of memory, a
 * secret in the text). */
int ll_bundle_emit_json(lua_State *L, int idx, const char *cmd,
                        const char *what, FILE *out, FILE *errs);

/* The string field key of the table at idx, or NULL (no metamethod). */
const char *ll_bundle_field(lua_State *L, int idx, const char *key,
                            size_t *len);

#endif
