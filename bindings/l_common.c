/* Error objects crossing the boundary as tables with a __tostring (as redis
 * scripting does), and the readers every Lua value goes through into C:
 * raw access, strict types, ranges, and strings copied out. */
#include "l_common.h"

#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ll.h"

/* Registry key of the weak table {error table -> code} filled by
 * ll_lua_push_error: the code C raised, whatever a script later does to
 * the table's fields. */
static const char raised_key = 0;

void ll_lua_push_error_line(lua_State *L, int idx, const char *no_code,
                            const char *no_message) {
  /* three slots, within the LUA_MINSTACK every C function starts with:
   * never raises (it runs in __tostring and in message handlers) */
  idx = lua_absindex(L, idx);
  ll_code c;
  const char *code = ll_lua_error_code(L, idx, &c) ? ll_code_name(c) : NULL;
  const char *msg = no_message, *forged = "";
  lua_pushliteral(L, "code");
  if (lua_rawget(L, idx) == LUA_TSTRING && !code) {
    code = lua_tostring(L, -1); /* not raised by C: as it says, marked so */
    forged = "a script's error object, not leaselua's: ";
  }
  lua_pushliteral(L, "message");
  if (lua_rawget(L, idx) == LUA_TSTRING)
    msg = lua_tostring(L, -1); /* both stay on the stack until pushed */
  lua_pushfstring(L, "%s%s: %s", forged, code ? code : no_code, msg);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

/* __tostring: raw fields only, strings only; never raises on a table a
 * script has rewritten. */
static int error_tostring(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE)
    ll_lua_push_error_line(L, 1, "LL_E_INTERNAL", "");
  else
    lua_pushliteral(L, "LL_E_INTERNAL: ");
  return 1;
}

void ll_lua_error_mt(lua_State *L) {
  if (luaL_newmetatable(L, LL_ERROR_MT)) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, LL_ERROR_MT);
    lua_setfield(L, -2, "__metatable"); /* scripts cannot swap or reuse it */
  }
  lua_pop(L, 1);
}

/* Pushes the registry's weak table of raised errors, made on first use. */
static void push_raised(lua_State *L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &raised_key) == LUA_TTABLE)
    return;
  lua_pop(L, 1);
  lua_createtable(L, 0, 4);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &raised_key);
}

void ll_lua_push_error(lua_State *L, ll_code code, const char *message) {
  if (code <= LL_OK || code >= LL_E__COUNT)
    code = LL_E_INTERNAL; /* an error always names a failure (never exit 0) */
  luaL_checkstack(L, 6, "error object");
  lua_createtable(L, 0, 4);
  lua_pushstring(L, ll_code_name(code));
  lua_setfield(L, -2, "code");
  lua_pushstring(L, message ? message : "");
  lua_setfield(L, -2, "message");
  lua_pushinteger(L, ll_code_invariant(code));
  lua_setfield(L, -2, "invariant");
  lua_pushinteger(L, ll_code_exit(code));
  lua_setfield(L, -2, "exit");
  ll_lua_error_mt(L);
  luaL_setmetatable(L, LL_ERROR_MT);
  push_raised(L);
  lua_pushvalue(L, -2);
  lua_pushinteger(L, (lua_Integer)code);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

int ll_lua_raise(lua_State *L, ll_code code, const char *message) {
  ll_lua_push_error(L, code, message);
  return lua_error(L);
}

int ll_lua_raisef(lua_State *L, ll_code code, const char *fmt, ...) {
  ll_error e;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(e.message, sizeof e.message, fmt, ap);
  va_end(ap);
  if (n < 0)
    e.message[0] = '\0';
  return ll_lua_raise(L, code, e.message);
}

int ll_lua_error_code(lua_State *L, int idx, ll_code *code) {
  if (lua_type(L, idx) != LUA_TTABLE || !lua_checkstack(L, 2))
    return 0;
  idx = lua_absindex(L, idx);
  int found = 0;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &raised_key) == LUA_TTABLE) {
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TNUMBER) {
      lua_Integer c = lua_tointeger(L, -1);
      if (c >= 0 && c < LL_E__COUNT) {
        *code = (ll_code)c;
        found = 1;
      }
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return found;
}

int ll_lua_error_exit(lua_State *L, int idx) {
  ll_code code;
  return ll_lua_error_code(L, idx, &code) ? ll_code_exit(code) : -1;
}

/* ------------------------------------------------- arguments and options */

/* What the value at idx is, for a message: its type, a number as it is, a
 * string by its length only (it may be a secret or a mebibyte). Never
 * runs a metamethod (no __tostring, no __name). */
static void describe(lua_State *L, int idx, char *buf, size_t cap) {
  int t = lua_type(L, idx);
  if (t == LUA_TNONE || t == LUA_TNIL) {
    snprintf(buf, cap, "nothing");
  } else if (t == LUA_TNUMBER && lua_isinteger(L, idx)) {
    snprintf(buf, cap, "%lld", (long long)lua_tointeger(L, idx));
  } else if (t == LUA_TNUMBER) {
    double d = (double)lua_tonumber(L, idx);
    if (isnan(d))
      snprintf(buf, cap, "NaN");
    else if (isinf(d))
      snprintf(buf, cap, "%sinfinity", d < 0 ? "-" : "");
    else
      snprintf(buf, cap, "%.17g", d);
  } else if (t == LUA_TSTRING) {
    snprintf(buf, cap, "a string of %zu bytes", (size_t)lua_rawlen(L, idx));
  } else if (t == LUA_TBOOLEAN) {
    snprintf(buf, cap, "%s", lua_toboolean(L, idx) ? "true" : "false");
  } else if (t == LUA_TUSERDATA && luaL_testudata(L, idx, LL_RUN_MT)) {
    snprintf(buf, cap, "a %s", LL_RUN_MT);
  } else if (t == LUA_TUSERDATA && luaL_testudata(L, idx, LL_WRITER_MT)) {
    snprintf(buf, cap, "a %s", LL_WRITER_MT);
  } else {
    snprintf(buf, cap, "a %s", lua_typename(L, t));
  }
}

static int raise_bad(lua_State *L, int idx, const char *fn, const char *what,
                     const char *must) {
  char got[64];
  describe(L, idx, got, sizeof got);
  return ll_lua_raisef(L, LL_E_USAGE, "%s: %s must be %s, got %s", fn, what,
                       must, got);
}

/* Copies the string at idx into buf (cap > 0) or raises. */
static void copy_string(lua_State *L, int idx, const char *fn, const char *what,
                        char *buf, size_t cap) {
  char must[64];
  snprintf(must, sizeof must, "a string of at most %zu bytes", cap - 1);
  if (lua_type(L, idx) != LUA_TSTRING)
    raise_bad(L, idx, fn, what, must);
  size_t len = 0;
  const char *s = lua_tolstring(L, idx, &len);
  if (len >= cap)
    raise_bad(L, idx, fn, what, must);
  if (memchr(s, '\0', len))
    ll_lua_raisef(L, LL_E_USAGE, "%s: %s holds a NUL byte: pass text", fn,
                  what);
  memcpy(buf, s, len);
  buf[len] = '\0';
}

static lua_Integer to_integer(lua_State *L, int idx, const char *fn,
                              const char *what, lua_Integer lo,
                              lua_Integer hi) {
  char must[96];
  snprintf(must, sizeof must, "an integer from %lld to %lld", (long long)lo,
           (long long)hi);
  int ok = 0;
  /* A float converts only when exact: NaN, infinities and 2.5 do not. */
  lua_Integer v =
      lua_type(L, idx) == LUA_TNUMBER ? lua_tointegerx(L, idx, &ok) : 0;
  if (!ok || v < lo || v > hi)
    raise_bad(L, idx, fn, what, must);
  return v;
}

void *ll_lua_check_handle(lua_State *L, int idx, const char *mt,
                          const char *fn) {
  void *p = luaL_testudata(L, idx, mt);
  if (!p) {
    char what[32], must[96];
    snprintf(what, sizeof what, "argument %d", idx);
    snprintf(must, sizeof must, "a %s (call methods with ':')", mt);
    raise_bad(L, idx, fn, what, must);
  }
  return p;
}

/* 1 when idx holds a table, 0 when it is none or nil; raises otherwise. */
static int opt_table(lua_State *L, int idx, const char *fn) {
  int t = lua_type(L, idx);
  if (t == LUA_TTABLE)
    return 1;
  if (t != LUA_TNONE && t != LUA_TNIL)
    raise_bad(L, idx, fn, "the options", "a table");
  return 0;
}

/* Pushes field key of the options at idx (raw); 0 when there are none. */
static int push_option(lua_State *L, int idx, const char *fn, const char *key) {
  idx = lua_absindex(L, idx);
  if (!opt_table(L, idx, fn))
    return 0;
  luaL_checkstack(L, 2, "options");
  lua_pushstring(L, key);
  if (lua_rawget(L, idx) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}

int ll_lua_opt_str(lua_State *L, int idx, const char *fn, const char *key,
                   char *buf, size_t cap) {
  if (!push_option(L, idx, fn, key))
    return 0;
  char what[64];
  snprintf(what, sizeof what, "option '%s'", key);
  copy_string(L, -1, fn, what, buf, cap);
  lua_pop(L, 1);
  return 1;
}

lua_Integer ll_lua_opt_int(lua_State *L, int idx, const char *fn,
                           const char *key, lua_Integer dflt, lua_Integer lo,
                           lua_Integer hi) {
  if (!push_option(L, idx, fn, key))
    return dflt;
  char what[64];
  snprintf(what, sizeof what, "option '%s'", key);
  lua_Integer v = to_integer(L, -1, fn, what, lo, hi);
  lua_pop(L, 1);
  return v;
}

int ll_lua_opt_bool(lua_State *L, int idx, const char *fn, const char *key,
                    int dflt) {
  if (!push_option(L, idx, fn, key))
    return dflt;
  if (lua_type(L, -1) != LUA_TBOOLEAN) {
    char what[64];
    snprintf(what, sizeof what, "option '%s'", key);
    raise_bad(L, -1, fn, what, "true or false");
  }
  int v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

int ll_lua_arg_str(lua_State *L, int idx, const char *fn, const char *name,
                   char *buf, size_t cap, int required) {
  if (lua_isnoneornil(L, idx)) {
    if (required) {
      char must[64];
      snprintf(must, sizeof must, "a string of at most %zu bytes", cap - 1);
      raise_bad(L, idx, fn, name, must);
    }
    return 0;
  }
  copy_string(L, idx, fn, name, buf, cap);
  return 1;
}

lua_Integer ll_lua_arg_int(lua_State *L, int idx, const char *fn,
                           const char *name, lua_Integer lo, lua_Integer hi) {
  return to_integer(L, idx, fn, name, lo, hi);
}

int ll_lua_traceback(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    ll_lua_push_error_line(L, 1, "error", "(a table)");
    return 1;
  }
  const char *msg = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
  if (!msg)
    msg = lua_pushfstring(L, "(a %s raised)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}
