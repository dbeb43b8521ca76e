/* cJSON <-> Lua values, for rows handed to scripts and manifests read from
 * them. */
#ifndef LL_L_JSON_H
#define LL_L_JSON_H

#include <cjson/cJSON.h>
#include <lua.h>

/* Pushes v as a Lua value: objects and arrays become tables (arrays
 * 1-based), null becomes nil. */
void ll_lua_push_json(lua_State *L, const cJSON *v);
/* Converts the value at idx to JSON; NULL with a message in err on a value
 * JSON cannot hold (functions, userdata, mixed tables, depth > 32). */
cJSON *ll_lua_to_json(lua_State *L, int idx, char *err, size_t cap);

#endif
