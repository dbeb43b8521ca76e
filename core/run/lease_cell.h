/* One lease-table cell (lease_cell.c): its NOT_REACHED row, or its attempt,
 * observation and row. Called by lease_table.c. */
#ifndef LL_LEASE_CELL_H
#define LL_LEASE_CELL_H

#include "lease_table_impl.h"

/* lease_cell.c: the NOT_REACHED row of c (no request), and the attempt. A
 * non-NULL out receives the row (export; the caller deletes it). */
ll_status ll_lt_cell_not_reached(ll_run *r, ll_lease_table *t,
                                 const ll_lt_cell *c, const char *reason,
                                 cJSON **out, ll_error *err) LL_WARN_UNUSED;
ll_status ll_lt_cell_attempt(ll_run *r, ll_lease_table *t, const ll_lt_cell *c,
                             cJSON **out, ll_error *err) LL_WARN_UNUSED;

#endif
