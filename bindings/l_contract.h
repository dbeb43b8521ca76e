/* The documented lease contract, read only, as `leaselua.lease_contract`. */
#ifndef LL_L_CONTRACT_H
#define LL_L_CONTRACT_H

#include <lua.h>

/* leaselua.lease_contract() -> {sources = {{id, title, url}...} (each also
 * under its id), cells = {{state, op, outcomes = {{status, family,
 * state_after, holder, source, section, source_text, checked}...},
 * conditions = {...}}...}}: a fresh copy of core/judgement's table each
 * call; arguments are ignored; raises only when out of memory. */
int ll_lua_lease_contract(lua_State *L);

#endif
