/* `leaselua.lease_contract()`: the reviewed lease contract (issue 18) as
 * plain tables, so the report can quote each cell's sources verbatim. A
 * copy: nothing a script does to it reaches the table the judge reads. */
#include "l_contract.h"

#include <lauxlib.h>

#include "lease_contract.h"

static void set_str(lua_State *L, const char *k, const char *v) {
  if (!v)
    return;
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

static void push_outcome(lua_State *L, const ll_lease_outcome *o) {
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, (lua_Integer)o->status);
  lua_setfield(L, -2, "status");
  set_str(L, "family", o->family);
  set_str(L, "state_after", o->state_after);
  set_str(L, "holder", o->holder);
  set_str(L, "source", o->source);
  set_str(L, "section", o->section);
  set_str(L, "source_text", o->source_text);
  set_str(L, "checked",
          o->check == LL_CHECK_PAGE ? "page text" : "not confirmed");
}

static void push_cell(lua_State *L, const ll_lease_cell *c) {
  lua_createtable(L, 0, 4);
  set_str(L, "state", ll_lease_state_name(c->state));
  set_str(L, "op", ll_lease_op_name(c->op));
  lua_createtable(L, c->n_outcomes, 0);
  for (int i = 0; i < c->n_outcomes && i < 2; i++) {
    push_outcome(L, &c->outcome[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "outcomes");
  lua_createtable(L, 2, 0);
  for (int i = 0; i < 2 && c->condition[i]; i++) {
    lua_pushstring(L, c->condition[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "conditions");
}

/* The sources the cells cite, each once, in the order first cited. */
static void push_sources(lua_State *L) {
  lua_newtable(L);
  int n = 0;
  for (size_t i = 0; i < ll_lease_contract_count(); i++) {
    const ll_lease_cell *c = ll_lease_contract_at(i);
    for (int k = 0; k < c->n_outcomes && k < 2; k++) {
      const ll_lease_source *s = ll_lease_contract_source(c->outcome[k].source);
      if (!s)
        continue;
      lua_getfield(L, -1, s->id);
      int seen = !lua_isnil(L, -1);
      lua_pop(L, 1);
      if (seen)
        continue;
      lua_createtable(L, 0, 3);
      set_str(L, "id", s->id);
      set_str(L, "title", s->title);
      set_str(L, "url", s->url);
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, s->id); /* by id, for the lookup above */
      lua_rawseti(L, -2, ++n);
    }
  }
}

int ll_lua_lease_contract(lua_State *L) {
  lua_createtable(L, 0, 2);
  push_sources(L);
  lua_setfield(L, -2, "sources");
  size_t count = ll_lease_contract_count();
  lua_createtable(L, count < 1024 ? (int)count : 0, 0);
  for (size_t i = 0; i < count; i++) {
    push_cell(L, ll_lease_contract_at(i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "cells");
  return 1;
}
