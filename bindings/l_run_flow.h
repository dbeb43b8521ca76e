/* The Run's composite steps, declarations, rows and clock. */
#ifndef LL_L_RUN_FLOW_H
#define LL_L_RUN_FLOW_H

#include <lua.h>

/* Adds declare, lifecycle, note, stop, step, reconcile, probe,
 * wait_for_broken, decide, finish, rows, state, now_ms, utc and sleep to
 * the Run's method table on top of the stack. */
void ll_lua_run_flow_methods(lua_State *L);

#endif
