/* The sandbox: what a script can reach is decided here, by allow list. */
#include "l_sandbox.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l_common.h"
#include "l_module.h"

struct ll_lualib {
  const char *name;
  const char *src;
  size_t len;
};
extern const struct ll_lualib ll_lualibs[];

static int load_lualib(lua_State *L, const struct ll_lualib *m) {
  if (luaL_loadbufferx(L, m->src, m->len, m->name, "t") != LUA_OK)
    return ll_lua_raisef(L, LL_E_INTERNAL, "the embedded %s does not load: %s",
                         m->name, lua_tostring(L, -1));
  lua_pushstring(L, m->name);
  lua_call(L, 1, 1);
  return 1;
}

/* require(name): "leaselua" or "lib.<name>", cached in the registry; any
 * other name raises LL_E_USAGE. */
static int l_require(lua_State *L) {
  char name[LL_LUA_LABEL_CAP];
  ll_lua_arg_str(L, 1, "require", "the module name", name, sizeof name, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "leaselua.loaded");
  lua_getfield(L, -1, name);
  if (!lua_isnil(L, -1))
    return 1;
  lua_pop(L, 1);
  if (strcmp(name, "leaselua") == 0) {
    ll_lua_open_module(L);
  } else {
    const struct ll_lualib *m = ll_lualibs;
    while (m->name && strcmp(m->name, name) != 0)
      m++;
    if (!m->name)
      return ll_lua_raisef(L, LL_E_USAGE,
                           "module '%s' is not available in the sandbox "
                           "(only leaselua and lib.*)",
                           name);
    load_lualib(L, m);
  }
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, name);
  return 1;
}

/* load(chunk [, name [, mode [, env]]]) restricted to text chunks given
 * as strings; another chunk or name raises LL_E_USAGE. A chunk that does
 * not compile returns nil, msg, as Lua's load does. */
static int l_load_text(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING)
    return ll_lua_raisef(L, LL_E_USAGE,
                         "load: the chunk must be a string of Lua text, got "
                         "%s",
                         luaL_typename(L, 1));
  int tn = lua_type(L, 2);
  if (tn != LUA_TNONE && tn != LUA_TNIL && tn != LUA_TSTRING)
    return ll_lua_raisef(L, LL_E_USAGE,
                         "load: the chunk name must be a string, got %s",
                         luaL_typename(L, 2));
  size_t len;
  const char *s = lua_tolstring(L, 1, &len); /* argument slots: stay put */
  const char *name = tn == LUA_TSTRING ? lua_tostring(L, 2) : "=(load)";
  int has_env = !lua_isnone(L, 4);
  if (luaL_loadbufferx(L, s, len, name, "t") != LUA_OK) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (has_env) {
    lua_pushvalue(L, 4);
    if (!lua_setupvalue(L, -2, 1))
      lua_pop(L, 1);
  }
  return 1;
}

/* setmetatable(t, mt) as Lua's, but a metatable holding __gc is refused:
 * a finalizer runs when the collector decides, inside whatever C call
 * allocates (a run method reading the ledger, the host's end after the
 * exit code is fixed), never where the script orders a step (invariant
 * 14). A __gc added to mt later marks nothing (Lua 5.4 reads it here). */
static int l_setmetatable(lua_State *L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    int has_gc = lua_rawget(L, 2) != LUA_TNIL;
    lua_pop(L, 1);
    if (has_gc)
      return ll_lua_raisef(L, LL_E_USAGE,
                           "setmetatable: a __gc finalizer is refused in the "
                           "sandbox: it would run when Lua collects, not when "
                           "the script orders a step");
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

typedef struct {
  size_t used, cap;
} mem_bound;

/* Lua's allocator (lua_Alloc) under a bound: what a block grows by must
 * fit in what is left. A NULL ptr's osize names the object's type, not a
 * size. */
static void *bounded_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  mem_bound *m = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    m->used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > m->cap - m->used)
    return NULL;
  void *p = realloc(ptr, nsize);
  if (p)
    m->used = m->used - old + nsize;
  return p;
}

static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr,
          "leaselua: PANIC: unprotected error in call to Lua API (%s)\n",
          msg ? msg : "error object is not a string");
  return 0; /* Lua aborts */
}

lua_State *ll_sandbox_newstate(size_t cap) {
  mem_bound *m = malloc(sizeof *m);
  if (!m)
    return NULL;
  m->used = 0;
  m->cap = cap;
  lua_State *L = lua_newstate(bounded_alloc, m);
  if (!L) {
    free(m);
    return NULL;
  }
  lua_atpanic(L, panic);
  lua_setwarnf(L, NULL, NULL);
  return L;
}

void ll_sandbox_close(lua_State *L) {
  void *m = NULL;
  if (!L)
    return;
  lua_getallocf(L, &m);
  lua_close(L);
  free(m);
}

void ll_sandbox_open(lua_State *L) {
  static const luaL_Reg libs[] = {
      {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
      {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
      {LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}};
  for (const luaL_Reg *l = libs; l->func; l++) {
    luaL_requiref(L, l->name, l->func, 1);
    lua_pop(L, 1);
  }
  static const char *const removed[] = {"dofile", "loadfile", NULL};
  for (const char *const *n = removed; *n; n++) {
    lua_pushnil(L);
    lua_setglobal(L, *n);
  }
  lua_pushcfunction(L, l_load_text);
  lua_setglobal(L, "load");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, l_setmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "leaselua.loaded");
  lua_pushcfunction(L, l_require);
  lua_setglobal(L, "require");
}

static int preload_loader(lua_State *L) {
  const struct ll_lualib *m = lua_touserdata(L, lua_upvalueindex(1));
  return load_lualib(L, m);
}

void ll_lualib_preload(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  for (const struct ll_lualib *m = ll_lualibs; m->name; m++) {
    lua_pushlightuserdata(L, (void *)m);
    lua_pushcclosure(L, preload_loader, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_pop(L, 1);
}
