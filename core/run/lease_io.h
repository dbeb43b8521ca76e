/* The lease table's requests and waits (lease_io.c), for lease_table.c and
 * lease_cell.c. A failed request (transport or refusal) stops the table. */
#ifndef LL_LEASE_IO_H
#define LL_LEASE_IO_H

#include "lease_table_impl.h"

/* The status is fatal to the run (durability, memory, replay, ...). */
int ll_lt_fatal(ll_status st);
/* The row's http_status, 0 for none. */
long ll_lt_status(const cJSON *row);
/* Stops the table: a stop row (the guard then refuses every request); the
 * cells without a row become NOT_REACHED with why. */
ll_status ll_lt_stop(ll_run *r, ll_lease_table *t, const char *kind,
                     const char *why, ll_error *err) LL_WARN_UNUSED;
/* One request under its step label: LL_OK with *row for a response; a
 * transport failure or a refusal stops the table (LL_OK, *failed set, *row
 * as recorded or NULL); a fatal status is returned. */
ll_status ll_lt_send(ll_run *r, ll_lease_table *t, const char *label,
                     const ll_req_spec *s, cJSON **row, int *failed,
                     ll_error *err) LL_WARN_UNUSED;
/* A properties read by the observer; t->obs_state keeps its lease state. */
ll_status ll_lt_props(ll_run *r, ll_lease_table *t, const char *label,
                      cJSON **row, int *failed, ll_error *err) LL_WARN_UNUSED;
/* Polls properties until the state is want (during: the state it may
 * still show), sleeping on the run's clock towards expected_ns. *seen 1
 * when want was observed, else why says what was; *last the last read. */
ll_status ll_lt_wait_state(ll_run *r, ll_lease_table *t, const char *label,
                           const char *want, const char *during,
                           double expected_ns, cJSON **last, char *why,
                           size_t cap, int *seen, ll_error *err) LL_WARN_UNUSED;
/* The wait of a cell whose duration expires: a lease (Leased (A)) or a
 * break (Breaking (A), by the run's poller). */
ll_status ll_lt_wait(ll_run *r, ll_lease_table *t, const ll_lt_cell *c,
                     const char *label, cJSON **last, char *why, size_t cap,
                     int *seen, ll_error *err) LL_WARN_UNUSED;

/* A cell of Breaking (A) (not the duration expiring) would run too close
 * to the break's documented end: LL_LT_BREAK_MARGIN_MS or less is left. */
int ll_lt_break_running_out(ll_run *r, const ll_lease_table *t,
                            const ll_lt_cell *c);
/* ...or its read after the attempt (read) ended after the break's
 * documented end: the state it shows cannot be told from the break's. */
int ll_lt_break_ended_before(const ll_lease_table *t, const ll_lt_cell *c,
                             const cJSON *read);

#endif
