/* The lease table's bindings (core/run/lease_table.h): the plan, and the
 * Run's lifecycle and cell methods. The script names cells; C decides
 * every request they send. */
#ifndef LL_L_LEASE_H
#define LL_L_LEASE_H

#include <lua.h>

/* leaselua.lease_plan{break_period = S} -> the plan's text, nothing sent. */
int ll_lua_lease_plan(lua_State *L);
/* Adds lease_plan, lease_lifecycle and cell to the Run's method table on
 * top of the stack. */
void ll_lua_lease_methods(lua_State *L);

#endif
