/* cJSON <-> Lua values. Row tables are built after the C work is done, so
 * no C allocation is held while Lua may raise. */
#include "l_json.h"

#include <lauxlib.h>
#include <stdio.h>

void ll_lua_push_json(lua_State *L, const cJSON *v) {
  luaL_checkstack(L, 4, "json nesting");
  if (!v || cJSON_IsNull(v)) {
    lua_pushnil(L);
  } else if (cJSON_IsBool(v)) {
    lua_pushboolean(L, cJSON_IsTrue(v));
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d == (double)(lua_Integer)d)
      lua_pushinteger(L, (lua_Integer)d);
    else
      lua_pushnumber(L, d);
  } else if (cJSON_IsString(v)) {
    lua_pushstring(L, v->valuestring);
  } else if (cJSON_IsArray(v)) {
    lua_createtable(L, cJSON_GetArraySize(v), 0);
    int i = 1;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
      ll_lua_push_json(L, it);
      lua_rawseti(L, -2, i++);
    }
  } else {
    lua_createtable(L, 0, cJSON_GetArraySize(v));
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
      ll_lua_push_json(L, it);
      lua_setfield(L, -2, it->string);
    }
  }
}

static cJSON *conv(lua_State *L, int idx, int depth, char *err, size_t cap) {
  idx = lua_absindex(L, idx);
  if (depth > 32) {
    snprintf(err, cap, "table nesting deeper than 32");
    return NULL;
  }
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    return cJSON_CreateNull();
  case LUA_TBOOLEAN:
    return cJSON_CreateBool(lua_toboolean(L, idx));
  case LUA_TNUMBER:
    return cJSON_CreateNumber(lua_tonumber(L, idx));
  case LUA_TSTRING:
    return cJSON_CreateString(lua_tostring(L, idx));
  case LUA_TTABLE:
    break;
  default:
    snprintf(err, cap, "a %s cannot be written as JSON", luaL_typename(L, idx));
    return NULL;
  }
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  cJSON *out = n > 0 ? cJSON_CreateArray() : cJSON_CreateObject();
  if (!out) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  if (n > 0) {
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, idx, i);
      cJSON *item = conv(L, -1, depth + 1, err, cap);
      lua_pop(L, 1);
      if (!item) {
        cJSON_Delete(out);
        return NULL;
      }
      cJSON_AddItemToArray(out, item);
    }
    return out;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      snprintf(err, cap, "table keys must be strings");
      lua_pop(L, 2);
      cJSON_Delete(out);
      return NULL;
    }
    cJSON *item = conv(L, -1, depth + 1, err, cap);
    if (!item) {
      lua_pop(L, 2);
      cJSON_Delete(out);
      return NULL;
    }
    cJSON_AddItemToObject(out, lua_tostring(L, -2), item);
    lua_pop(L, 1);
  }
  return out;
}

cJSON *ll_lua_to_json(lua_State *L, int idx, char *err, size_t cap) {
  return conv(L, idx, 0, err, cap);
}
