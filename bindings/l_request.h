/* The Run's single requests and the Writer handle (leaselua.Writer). */
#ifndef LL_L_REQUEST_H
#define LL_L_REQUEST_H

#include <lua.h>

/* A Writer: an alias, bound to a client-generated lease ID or not. Its
 * uservalue 1 is the Run it belongs to. */
typedef struct {
  char alias[16];
  int bound;
} l_writer;

/* Registers the Writer metatable and adds the request methods
 * (properties, read, create_container, break_lease, writer, unbound) to
 * the Run's method table on top of the stack. */
void ll_lua_request_methods(lua_State *L);

#endif
