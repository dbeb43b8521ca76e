/* The lease-table engine: runs the plan (lease_plan.c) on a run. Every
 * request goes through ll_run_request (guard, intent, outcome); this file
 * only decides which ones, in the plan's order, and writes the cell rows
 * (lease_cell.c). A state that cannot be established makes its cells
 * NOT_REACHED; an unknown outcome or a refusal stops the table (no request
 * follows: the run is reconciled by leaselua recover); a cleanup in doubt
 * leaves the blob. A deviation is recorded, never retried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "jsonx.h"
#include "lease_cell.h"
#include "lease_io.h"
#include "run_impl.h"

static ll_lease_table *table_of(ll_run *r) {
  return r->table;
}

const ll_lease_plan *ll_lease_table_plan(const ll_run *r) {
  return r->table ? &r->table->plan : NULL;
}

/* ---- begin ------------------------------------------------------------ */

static ll_status bind_c(ll_run *r, ll_error *err) {
  if (ll_run_writer(r, "C"))
    return LL_OK;
  if (r->nwriters >= LL_MAX_WRITERS)
    return ll_fail(err, LL_E_USAGE, "too many writers for the lease table");
  /* C is only ever proposed (change B to C), never an actor; its ID lives
   * where every writer's does, wiped when the run closes */
  ll_writer *w = &r->writers[r->nwriters];
  if (ll_guid_v4(w->lease_id) != LL_OK)
    return ll_fail(err, LL_E_INTERNAL, "no randomness for a lease ID");
  ll_strlcpy(w->alias, "C", sizeof w->alias);
  ll_status st = ll_run_bind_row(r, "C", w->lease_id, NULL, err);
  if (st == LL_OK)
    r->nwriters++;
  return st;
}

static ll_status declare_all(ll_run *r, const ll_lease_plan *p, ll_error *err) {
  ll_status st = LL_OK;
  for (int i = 0; st == LL_OK && i < p->nlife; i++) {
    const ll_lt_life *l = &p->life[i];
    st = ll_run_declare(r, l->create_rev, "A", NULL, err);
    for (int k = 0; st == LL_OK && k < l->ncells; k++) {
      const ll_lt_cell *c = &p->cells[l->first + k];
      if (c->revision >= 0)
        st = ll_run_declare(r, c->revision, c->writer, NULL, err);
    }
  }
  return st;
}

static ll_status begin(ll_run *r, long break_period, int destructive,
                       const char *after_dir, const ll_lease_plan **out,
                       ll_error *err) {
  if (r->table)
    return ll_fail(err, LL_E_ORDER, "the lease table is planned once a run");
  if (!r->planned || !r->plan.lease_table)
    return ll_fail(err, LL_E_USAGE,
                   "the lease table runs only in a run opened for it "
                   "(leaselua.open{lease_table = true})");
  int declared0 = 0, declaredn = 0;
  for (int i = 0; i < r->plan.nbreaks; i++) {
    declared0 |= r->plan.break_periods[i] == 0;
    declaredn |= r->plan.break_periods[i] == break_period;
  }
  if (!declared0 || !declaredn)
    return ll_fail(err, LL_E_USAGE,
                   "the lease table breaks with period 0 and %ld s: declare "
                   "both in leaselua.open{break_periods = {0, %ld}}",
                   break_period, break_period);
  ll_lease_table *t = ll_malloc(sizeof *t);
  if (!t)
    return ll_fail(err, LL_E_NOMEM, "out of memory");
  memset(t, 0, sizeof *t);
  ll_status st = ll_lease_plan_build(break_period, destructive, &t->plan, err);
  if (st == LL_OK && destructive)
    st = ll_run_check_after(r, after_dir, err);
  if (st != LL_OK) {
    ll_free(t);
    return st;
  }
  ll_strlcpy(t->after, after_dir ? after_dir : "", sizeof t->after);
  t->life = -1;
  r->table = t;
  st = ll_run_bind(r, "A", err);
  if (st == LL_OK)
    st = ll_run_bind(r, "B", err);
  if (st == LL_OK)
    st = bind_c(r, err);
  if (st == LL_OK)
    st = declare_all(r, &t->plan, err);
  if (st == LL_OK) {
    char text[400];
    int skipped = 0;
    for (int i = 0; i < t->plan.ncells; i++)
      skipped += t->plan.cells[i].skip != NULL;
    snprintf(text, sizeof text,
             "%d lifecycles, %d cells (%d planned NOT_REACHED), break period "
             "%ld s, expiry lease %d s, expected wait %ld s%s",
             t->plan.nlife, t->plan.ncells, skipped, break_period,
             LL_LT_EXPIRY_S, t->plan.wait_s,
             destructive ? ", destructive lifecycles authorised" : "");
    st = ll_run_note(r, "lease-table plan", text, err);
  }
  if (st == LL_OK)
    *out = &t->plan;
  return st;
}

ll_status ll_lease_table_begin(ll_run *r, long break_period, int destructive,
                               const char *after_dir, const ll_lease_plan **out,
                               ll_error *err) {
  *out = NULL;
  if (r->dead)
    return ll_run_dead(r, err);
  r->table_engine++;
  ll_status st = begin(r, break_period, destructive, after_dir, out, err);
  r->table_engine--;
  return ll_run_settle(r, st, NULL, err);
}

/* ---- lifecycles ------------------------------------------------------- */

static void not_reached(ll_lease_table *t, const char *fmt, const char *a,
                        const char *b) {
  t->reached = 0;
  snprintf(t->reason, sizeof t->reason, fmt, a, b);
}

/* Cleans up the current lifecycle under the certainty rule: a lease still
 * running is broken (period 0) and seen broken, then the blob is deleted on
 * the ETag of the lifecycle's last read-back write (If-Match, set by the
 * run) and seen absent; in doubt the blob is left and the table stops. */
static ll_status cleanup(ll_run *r, ll_lease_table *t, ll_error *err) {
  int li = t->life + 1, failed = 0;
  char step[LL_LT_STEP_MAX];
  cJSON *row = NULL;
  ll_status st = LL_OK;
  if (t->cleaned || t->stopped)
    return LL_OK;
  t->cleaned = 1;
  if (!t->created)
    return ll_lt_stop(
        r, t, "left-for-operator",
        "the lifecycle's create was not accepted: the blob is left "
        "as it is",
        err);
  if (ll_lt_cleanup_breaks(t->obs_state)) {
    ll_req_spec s = ll_req_spec_for(LL_OP_LEASE_BREAK, NULL, "operator");
    s.break_period = 0;
    ll_lt_step(step, sizeof step, li, t->cont, "cleanup: break, period 0");
    st = ll_lt_send(r, t, step, &s, &row, &failed, err);
    int ok = ll_lt_status(row) == 202;
    cJSON_Delete(row);
    if (st != LL_OK || failed)
      return st;
    ll_lt_step(step, sizeof step, li, t->cont, "cleanup: properties");
    st = ll_lt_props(r, t, step, &row, &failed, err);
    cJSON_Delete(row);
    if (st != LL_OK || failed)
      return st;
    if (!ok || strcmp(t->obs_state, "broken") != 0)
      return ll_lt_stop(r, t, "left-for-operator",
                        "cleanup: the lease was not seen broken after a break "
                        "with period 0: the blob is left as it is",
                        err);
  }
  ll_req_spec d = ll_req_spec_for(LL_OP_DELETE_BLOB, NULL, "operator");
  ll_lt_step(step, sizeof step, li, t->cont, "cleanup: delete");
  st = ll_lt_send(r, t, step, &d, &row, &failed, err);
  int deleted = ll_lt_status(row) == 202;
  cJSON_Delete(row);
  if (st != LL_OK || failed)
    return st;
  if (!deleted)
    return ll_lt_stop(
        r, t, "left-for-operator",
        "cleanup: the delete on the read-back ETag was not accepted: "
        "the blob is left as it is",
        err);
  ll_lt_step(step, sizeof step, li, t->cont, "cleanup: confirm absent");
  st = ll_lt_props(r, t, step, &row, &failed, err);
  int absent = ll_lt_status(row) == 404;
  cJSON_Delete(row);
  if (st != LL_OK || failed)
    return st;
  if (!absent)
    return ll_lt_stop(r, t, "left-for-operator",
                      "cleanup: the blob was not read absent after its delete",
                      err);
  return LL_OK;
}

/* The current lifecycle's cells without a row get their NOT_REACHED row,
 * then the blob is cleaned up. */
static ll_status finish_life(ll_run *r, ll_lease_table *t, ll_error *err) {
  if (t->life < 0)
    return LL_OK;
  const ll_lt_life *l = &t->plan.life[t->life];
  ll_status st = LL_OK;
  for (; st == LL_OK && t->k < l->ncells; t->k++) {
    const ll_lt_cell *c = &t->plan.cells[l->first + t->k];
    st = ll_lt_cell_not_reached(r, t, c,
                                t->stopped    ? t->stop_reason
                                : !t->reached ? t->reason
                                              : "the script did not attempt "
                                                "the cell",
                                NULL, err);
  }
  if (st == LL_OK)
    st = cleanup(r, t, err);
  return st;
}

/* Create-only, read back, then the state. */
static ll_status establish(ll_run *r, ll_lease_table *t, ll_error *err) {
  const ll_lt_life *l = &t->plan.life[t->life];
  int li = t->life + 1, failed = 0;
  char step[LL_LT_STEP_MAX];
  cJSON *row = NULL;
  const char *key = ll_lease_state_key(l->state);
  ll_req_spec s = ll_req_spec_for(LL_OP_PUT_BLOB, NULL, "A");
  s.revision = t->create_rev;
  ll_lt_step(step, sizeof step, li, t->cont, "create rev %ld", t->create_rev);
  ll_status st = ll_lt_send(r, t, step, &s, &row, &failed, err);
  t->created = ll_lt_status(row) == 201;
  cJSON_Delete(row);
  if (st != LL_OK || failed)
    return st;
  if (!t->created) {
    not_reached(t, "%s: the create-only Put Blob was not accepted%s", step, "");
    return LL_OK;
  }
  s = ll_req_spec_for(LL_OP_GET_BLOB, NULL, "observer");
  ll_lt_step(step, sizeof step, li, t->cont, "read back rev %ld",
             t->create_rev);
  st = ll_lt_send(r, t, step, &s, &row, &failed, err);
  int back = ll_lt_status(row) == 200 &&
             ll_json_long(row, "content_revision", -1) == t->create_rev;
  cJSON_Delete(row);
  if (st != LL_OK || failed)
    return st;
  if (!back) {
    not_reached(t, "%s: the read-back did not show the created revision%s",
                step, "");
    return LL_OK;
  }
  if (l->duration) {
    s = ll_req_spec_for(LL_OP_LEASE_ACQUIRE, NULL, "A");
    s.proposed = "A";
    s.bound = 1;
    s.lease_duration = l->duration;
    if (l->duration < 0)
      ll_lt_step(step, sizeof step, li, t->cont, "acquire A (infinite)");
    else
      ll_lt_step(step, sizeof step, li, t->cont, "acquire A (%ld s)",
                 l->duration);
    st = ll_lt_send(r, t, step, &s, &row, &failed, err);
    int ok = ll_lt_status(row) == 201;
    t->acquired_ns = row ? ll_json_double(row, "mono_end_ns", 0) : 0;
    cJSON_Delete(row);
    if (st != LL_OK || failed)
      return st;
    if (!ok) {
      not_reached(t, "%s: the acquire was not accepted%s", step, "");
      return LL_OK;
    }
  }
  if (l->establish_break >= 0) {
    s = ll_req_spec_for(LL_OP_LEASE_BREAK, NULL, "operator");
    s.break_period = l->establish_break;
    ll_lt_step(step, sizeof step, li, t->cont, "break, period %ld",
               l->establish_break);
    st = ll_lt_send(r, t, step, &s, &row, &failed, err);
    int ok = ll_lt_status(row) == 202;
    t->break_ns = row ? ll_json_double(row, "mono_end_ns", 0) : 0;
    cJSON_Delete(row);
    if (st != LL_OK || failed)
      return st;
    if (!ok) {
      not_reached(t, "%s: the break was not accepted%s", step, "");
      return LL_OK;
    }
  }
  if (l->state == LL_LS_EXPIRED) {
    char why[200];
    int seen = 0;
    ll_lt_step(step, sizeof step, li, t->cont, "wait for expired");
    st = ll_lt_wait_state(r, t, step, "expired", "leased",
                          t->acquired_ns + (double)l->duration * 1e9, &row, why,
                          sizeof why, &seen, err);
    cJSON_Delete(row);
    if (st != LL_OK || t->stopped)
      return st;
    if (!seen)
      not_reached(t, "%s: %s", step, why);
    return LL_OK;
  }
  ll_lt_step(step, sizeof step, li, t->cont, "establish: properties");
  st = ll_lt_props(r, t, step, &row, &failed, err);
  int ok = ll_lt_status(row) == 200 && strcmp(t->obs_state, key) == 0;
  cJSON_Delete(row);
  if (st != LL_OK || failed)
    return st;
  if (!ok)
    not_reached(t, "%s: the state read was not %s", step, key);
  return LL_OK;
}

/* A fresh lifecycle of the current plan lifecycle's state: the run's
 * lifecycle row, then its establishment. A refusal stops the table. */
static ll_status start_life(ll_run *r, ll_lease_table *t, ll_error *err) {
  const ll_lt_life *l = &t->plan.life[t->life];
  t->reached = 1;
  t->drifted = 0;
  t->cleaned = 0;
  t->created = 0;
  t->reason[0] = '\0';
  t->obs_state[0] = '\0';
  if (t->stopped)
    return LL_OK;
  char why[96];
  snprintf(why, sizeof why, "lease table: %s%s", ll_lease_state_name(l->state),
           t->cont ? " (continued)" : "");
  ll_error e = {0};
  ll_status st = ll_run_lifecycle(r, l->destructive, why,
                                  l->destructive ? t->after : NULL, &e);
  if (ll_lt_fatal(st)) {
    if (err)
      *err = e;
    return st;
  }
  if (st != LL_OK) {
    char text[400];
    snprintf(text, sizeof text, "new lifecycle refused: %.370s", e.message);
    return ll_lt_stop(r, t, "left-for-operator", text, err);
  }
  return establish(r, t, err);
}

/* A preserving cell left the state (a deviation, recorded in its row):
 * the lifecycle's later cells go on on a fresh lifecycle of the same state,
 * after the cleanup. Nothing is attempted twice: no retry. */
static ll_status continue_life(ll_run *r, ll_lease_table *t, ll_error *err) {
  ll_status st = cleanup(r, t, err);
  if (st != LL_OK || t->stopped)
    return st;
  t->cont++;
  t->create_rev = t->plan.next_rev++;
  st = ll_run_declare(r, t->create_rev, "A", NULL, err);
  if (st == LL_OK)
    st = start_life(r, t, err);
  return st;
}

static ll_status lifecycle(ll_run *r, cJSON **out, ll_error *err) {
  ll_lease_table *t = table_of(r);
  if (!t)
    return ll_fail(err, LL_E_ORDER, "run:lease_plan first: no table planned");
  if (t->life + 1 >= t->plan.nlife)
    return ll_fail(err, LL_E_ORDER, "every lifecycle of the plan has run");
  ll_status st = finish_life(r, t, err);
  if (st != LL_OK)
    return st;
  t->life++;
  t->k = 0;
  t->cont = 0;
  const ll_lt_life *l = &t->plan.life[t->life];
  t->create_rev = l->create_rev;
  st = start_life(r, t, err);
  if (st != LL_OK)
    return st;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "epoch", ll_model_epoch(r->model));
  cJSON_AddNumberToObject(o, "lifecycle", t->life + 1);
  cJSON_AddStringToObject(o, "state", ll_lease_state_name(l->state));
  cJSON_AddBoolToObject(o, "reached", t->reached && !t->stopped);
  cJSON_AddStringToObject(o, "reason", t->stopped ? t->stop_reason : t->reason);
  cJSON_AddNumberToObject(o, "cells", l->ncells);
  *out = o;
  return LL_OK;
}

ll_status ll_lease_table_lifecycle(ll_run *r, cJSON **out, ll_error *err) {
  *out = NULL;
  if (r->dead)
    return ll_run_dead(r, err);
  r->table_engine++; /* its requests and lifecycles: ll_run_table_refuses */
  ll_status st = lifecycle(r, out, err);
  r->table_engine--;
  return ll_run_settle(r, st, out, err);
}

/* ---- cells ------------------------------------------------------------ */

static ll_status cell(ll_run *r, ll_lease_state s, ll_lease_op op, cJSON **out,
                      ll_error *err) {
  ll_lease_table *t = table_of(r);
  if (!t || t->life < 0)
    return ll_fail(err, LL_E_ORDER,
                   "run:cell: no lifecycle of the table "
                   "is running (run:lease_lifecycle first)");
  const ll_lt_life *l = &t->plan.life[t->life];
  if (t->k >= l->ncells)
    return ll_fail(err, LL_E_ORDER,
                   "run:cell: lifecycle %d has no cell left: start the next "
                   "one",
                   t->life + 1);
  const ll_lt_cell *c = &t->plan.cells[l->first + t->k];
  if (c->state != s || c->op != op) {
    char want[80], got[80];
    ll_lease_cell_label(c->state, c->op, want, sizeof want);
    ll_lease_cell_label(s, op, got, sizeof got);
    return ll_fail(err, LL_E_ORDER, "run:cell(%s): the plan's next cell is %s",
                   got, want);
  }
  t->k++;
  ll_status st = LL_OK;
  /* A cell of Breaking (A) needs the break still running: too close to its
   * documented end, the cell goes on on a fresh lifecycle instead. */
  if (!c->skip && t->reached && ll_lt_break_running_out(r, t, c))
    t->drifted = 1;
  if (t->drifted && !c->skip && !t->stopped)
    st = continue_life(r, t, err);
  if (st != LL_OK)
    return st;
  if (c->skip)
    st = ll_lt_cell_not_reached(r, t, c, c->skip, out, err);
  else if (t->stopped)
    st = ll_lt_cell_not_reached(r, t, c, t->stop_reason, out, err);
  else if (!t->reached)
    st = ll_lt_cell_not_reached(r, t, c, t->reason, out, err);
  else
    st = ll_lt_cell_attempt(r, t, c, out, err);
  if (st == LL_OK && t->k >= l->ncells)
    st = cleanup(r, t, err);
  return st;
}

ll_status ll_lease_table_cell(ll_run *r, ll_lease_state s, ll_lease_op op,
                              cJSON **out, ll_error *err) {
  *out = NULL;
  if (r->dead)
    return ll_run_dead(r, err);
  r->table_engine++;
  ll_status st = cell(r, s, op, out, err);
  r->table_engine--;
  return ll_run_settle(r, st, out, err);
}

static ll_status close_table(ll_run *r, ll_error *err) {
  ll_lease_table *t = table_of(r);
  if (!t || t->closed)
    return LL_OK;
  ll_status st = finish_life(r, t, err);
  while (st == LL_OK && t->life + 1 < t->plan.nlife) {
    const ll_lt_life *l = &t->plan.life[++t->life];
    for (t->k = 0; st == LL_OK && t->k < l->ncells; t->k++)
      st = ll_lt_cell_not_reached(
          r, t, &t->plan.cells[l->first + t->k],
          t->stopped ? t->stop_reason
                     : "the script ended before this cell's lifecycle",
          NULL, err);
  }
  if (st == LL_OK)
    t->closed = 1;
  return st;
}

ll_status ll_lease_table_close(ll_run *r, ll_error *err) {
  if (r->dead)
    return ll_run_dead(r, err);
  r->table_engine++;
  ll_status st = close_table(r, err);
  r->table_engine--;
  return ll_run_settle(r, st, NULL, err);
}

/* For lease_cell.c: the wait of a cell whose duration expires. A lease
 * expiring is polled here; a break running out by the run's poller
 * (ll_run_wait_broken), whose finding names its last read. */