/* cJSON <-> Lua values, for rows handed to scripts and manifests read from
 * them. */
#ifndef LL_L_JSON_H
#define LL_L_JSON_H

#include <cjson/cJSON.h>
#include <lua.h>

/* Bounds of a Lua value converted to JSON. */
#define LL_JSON_MAX_DEPTH 32
#define LL_JSON_MAX_VALUES 100000L
#define LL_JSON_MAX_VALUES_TEXT "100000"
#define LL_JSON_MAX_BYTES (4u * 1024u * 1024u)
#define LL_JSON_MAX_BYTES_TEXT "4 MiB"

/* Pushes v as a Lua value: objects and arrays become tables (arrays
 * 1-based), null becomes nil. */
void ll_lua_push_json(lua_State *L, const cJSON *v);
/* Converts the value at idx to JSON by raw access (no metamethod runs, and
 * it never raises). NULL with a message in err naming where in the value
 * (e.g. "permitted_actors[2]: ...") on what JSON cannot hold exactly:
 * functions, userdata, threads, NaN and infinities, integers beyond 2^53,
 * strings with NUL bytes or invalid UTF-8, non-string keys, lists with
 * holes or other keys, cycles, nesting deeper than LL_JSON_MAX_DEPTH, more
 * than LL_JSON_MAX_VALUES values or LL_JSON_MAX_BYTES of strings. */
cJSON *ll_lua_to_json(lua_State *L, int idx, char *err, size_t cap);
/* Orders the members of every object in v by key (bytewise; equal keys
 * keep their order), so that a Lua table, whose traversal order varies
 * from run to run, prints the same every time. No allocation. */
void ll_json_sort_members(cJSON *v);

#endif
