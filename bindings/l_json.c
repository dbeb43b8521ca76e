/* cJSON <-> Lua values. Row tables are built after the C work is done, so
 * no C allocation is held while Lua may raise; a Lua value becomes JSON by
 * raw access only, so no script code runs while C builds the tree. */
#include "l_json.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

void ll_lua_push_json(lua_State *L, const cJSON *v) {
  luaL_checkstack(L, 4, "json nesting");
  if (!v || cJSON_IsNull(v)) {
    lua_pushnil(L);
  } else if (cJSON_IsBool(v)) {
    lua_pushboolean(L, cJSON_IsTrue(v));
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    /* The range test first: casting a double outside lua_Integer (or NaN)
     * is undefined. */
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
        (double)(lua_Integer)d == d)
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
      /* a null member sets nothing in a new table: not pushed (a row's
       * nulls are a fifth of its members); keys are unique in every row */
      if (!it->string || cJSON_IsNull(it))
        continue;
      ll_lua_push_json(L, it);
      lua_setfield(L, -2, it->string);
    }
  }
}

typedef struct {
  char *err;
  size_t cap;
  const void *open[LL_JSON_MAX_DEPTH + 1]; /* the tables being converted */
  long values;
  size_t bytes;
  char where[160]; /* the path of the value, e.g. permitted_actors[2] */
  size_t wlen;
} conv_ctx;

static cJSON *fail(conv_ctx *c, const char *what) {
  if (c->wlen)
    snprintf(c->err, c->cap, "%s: %s", c->where, what);
  else
    snprintf(c->err, c->cap, "%s", what);
  return NULL;
}

/* Appends a key to where; returns the length to restore. */
static size_t enter_key(conv_ctx *c, const char *key, lua_Integer index) {
  size_t keep = c->wlen, room = sizeof c->where - c->wlen;
  int n = key ? snprintf(c->where + c->wlen, room, "%s%s", keep ? "." : "", key)
              : snprintf(c->where + c->wlen, room, "[%lld]", (long long)index);
  c->wlen = n < 0
                ? keep
                : ((size_t)n >= room ? sizeof c->where - 1 : keep + (size_t)n);
  return keep;
}

static void leave_key(conv_ctx *c, size_t keep) {
  c->wlen = keep;
  c->where[keep] = '\0';
}

/* A string at idx (a value or a key), counted against the byte limit. */
static int string_ok(conv_ctx *c, lua_State *L, int idx, const char **out) {
  size_t len = 0;
  const char *s = lua_tolstring(L, idx, &len);
  c->bytes += len;
  if (c->bytes > LL_JSON_MAX_BYTES) {
    fail(c, "strings longer than " LL_JSON_MAX_BYTES_TEXT " in all");
    return 0;
  }
  if (memchr(s, '\0', len)) {
    fail(c, "a string holds a NUL byte");
    return 0;
  }
  if (!ll_utf8_valid((const unsigned char *)s, len)) {
    fail(c, "a string is not valid UTF-8");
    return 0;
  }
  *out = s;
  return 1;
}

static cJSON *conv(lua_State *L, int idx, int depth, conv_ctx *c);

/* The table at idx as an array (keys exactly 1..n) or an object (string
 * keys only); anything else is refused, not guessed at. */
static cJSON *conv_table(lua_State *L, int idx, int depth, conv_ctx *c) {
  const void *self = lua_topointer(L, idx);
  for (int i = 0; i < depth; i++)
    if (c->open[i] == self)
      return fail(c, "the table contains itself (a cycle)");
  if (depth >= LL_JSON_MAX_DEPTH)
    return fail(c, "tables nested deeper than 32");
  c->open[depth] = self;
  if (!lua_checkstack(L, 4))
    return fail(c, "tables nested too deeply");
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    count++;
  }
  cJSON *out = n > 0 ? cJSON_CreateArray() : cJSON_CreateObject();
  if (!out)
    return fail(c, "out of memory");
  if (n > 0) {
    if (count != n) {
      cJSON_Delete(out);
      return fail(c, "a table mixes a list with other keys (or has holes)");
    }
    for (lua_Integer i = 1; i <= n; i++) {
      size_t keep = enter_key(c, NULL, i);
      lua_rawgeti(L, idx, i);
      cJSON *item = lua_isnil(L, -1) ? fail(c, "a list has a hole")
                                     : conv(L, -1, depth + 1, c);
      lua_pop(L, 1);
      if (!item || !cJSON_AddItemToArray(out, item)) {
        if (item)
          cJSON_Delete(item);
        cJSON_Delete(out);
        return item ? fail(c, "out of memory") : NULL;
      }
      leave_key(c, keep);
    }
    return out;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *key = NULL;
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 2);
      cJSON_Delete(out);
      return fail(c, "table keys must be strings (or a list 1..n)");
    }
    if (!string_ok(c, L, -2, &key)) {
      lua_pop(L, 2);
      cJSON_Delete(out);
      return NULL;
    }
    size_t keep = enter_key(c, key, 0);
    cJSON *item = conv(L, -1, depth + 1, c);
    lua_pop(L, 1); /* the value; the key stays for lua_next */
    if (!item || !cJSON_AddItemToObject(out, key, item)) {
      if (item)
        cJSON_Delete(item);
      lua_pop(L, 1);
      cJSON_Delete(out);
      return item ? fail(c, "out of memory") : NULL;
    }
    leave_key(c, keep);
  }
  return out;
}

static cJSON *conv(lua_State *L, int idx, int depth, conv_ctx *c) {
  idx = lua_absindex(L, idx);
  if (++c->values > LL_JSON_MAX_VALUES)
    return fail(c, "more than " LL_JSON_MAX_VALUES_TEXT " values");
  cJSON *v = NULL;
  const char *s = NULL;
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    v = cJSON_CreateNull();
    break;
  case LUA_TBOOLEAN:
    v = cJSON_CreateBool(lua_toboolean(L, idx));
    break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx)) {
      lua_Integer i = lua_tointeger(L, idx);
      /* A JSON reader holds numbers as doubles: exact up to 2^53 only. */
      if (i > 9007199254740992LL || i < -9007199254740992LL)
        return fail(c, "an integer beyond 2^53 cannot be written exactly");
      v = cJSON_CreateNumber((double)i);
    } else {
      double d = (double)lua_tonumber(L, idx);
      if (!isfinite(d))
        return fail(c, "NaN and infinities cannot be written as JSON");
      v = cJSON_CreateNumber(d);
    }
    break;
  case LUA_TSTRING:
    if (!string_ok(c, L, idx, &s))
      return NULL;
    v = cJSON_CreateString(s);
    break;
  case LUA_TTABLE:
    return conv_table(L, idx, depth, c);
  default: {
    char what[64];
    snprintf(what, sizeof what, "a %s cannot be written as JSON",
             lua_typename(L, lua_type(L, idx)));
    return fail(c, what);
  }
  }
  return v ? v : fail(c, "out of memory");
}

cJSON *ll_lua_to_json(lua_State *L, int idx, char *err, size_t cap) {
  conv_ctx c;
  memset(&c, 0, sizeof c);
  c.err = err;
  c.cap = cap;
  return conv(L, idx, 0, &c);
}

/* A stable merge sort of the list from head by key, on next only. */
static cJSON *sort_by_key(cJSON *head, size_t n) {
  if (n < 2) {
    if (head)
      head->next = NULL;
    return head;
  }
  cJSON *mid = head;
  for (size_t i = 0; i < n / 2; i++)
    mid = mid->next;
  cJSON *a = sort_by_key(head, n / 2), *b = sort_by_key(mid, n - n / 2);
  cJSON *out = NULL, **tail = &out;
  while (a && b) {
    cJSON **least = strcmp(b->string, a->string) < 0 ? &b : &a;
    *tail = *least;
    tail = &(*least)->next;
    *least = (*least)->next;
  }
  *tail = a ? a : b;
  return out;
}

void ll_json_sort_members(cJSON *v) {
  if (!v || !(cJSON_IsObject(v) || cJSON_IsArray(v)))
    return;
  size_t n = 0;
  for (cJSON *c = v->child; c; c = c->next) {
    ll_json_sort_members(c);
    n++;
  }
  if (!cJSON_IsObject(v) || n < 2)
    return;
  v->child = sort_by_key(v->child, n);
  cJSON *prev = NULL; /* cJSON's links: each prev, and the head's the tail */
  for (cJSON *c = v->child; c; c = c->next) {
    c->prev = prev;
    prev = c;
  }
  v->child->prev = prev;
}
