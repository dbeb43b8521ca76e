/* The lease-table flow (issue 18): the plan computed from the documented
 * contract (lease_contract.h), and the engine that runs it on a run. A
 * lifecycle reaches one state on a fresh create-only blob, attempts the
 * cells of that state (the state-preserving ones first, the state-changing
 * one last) and cleans up under the certainty rule. The script only names
 * the next cell: which request it sends, with which lease ID and payload,
 * is decided here. Each attempt ends in one "cell" row (docs/EVIDENCE.md). */
#ifndef LL_LEASE_TABLE_H
#define LL_LEASE_TABLE_H

#include <cjson/cJSON.h>

#include "lease_contract.h"
#include "run.h"

#define LL_LT_MAX_LIFE 48
#define LL_LT_MAX_CELLS (LL_LS_COUNT * LL_LO_COUNT)
#define LL_LT_EXPIRY_S 15   /* the finite lease of Expired (A): >= 15 s */
#define LL_LT_FIRST_REV 100 /* the plan's first declared revision */

typedef struct {
  ll_lease_state state;
  ll_lease_op op;
  int changes;      /* the cell leaves the lifecycle's state: it is last */
  const char *skip; /* planned NOT_REACHED (no request), with this reason */
  long revision;    /* a write cell's declared revision, else LL_NO_REVISION */
  const char *writer; /* its writer */
} ll_lt_cell;

typedef struct {
  ll_lease_state state;
  int destructive;      /* holds a cell's unconditioned write */
  long duration;        /* the establishing acquire: -1 or 15; 0 none */
  long establish_break; /* the establishing break period, -1 none */
  long wait_s;          /* the waits this lifecycle makes necessary */
  long create_rev;      /* the lifecycle's create-only Put Blob (by A) */
  int first, ncells;    /* cells[first .. first + ncells - 1] */
} ll_lt_life;

typedef struct {
  ll_lt_life life[LL_LT_MAX_LIFE];
  int nlife;
  ll_lt_cell cells[LL_LT_MAX_CELLS];
  int ncells;
  long break_period; /* the period of Breaking (A) and of "break, period > 0" */
  int destructive;   /* the operator authorised destructive lifecycles */
  long wait_s;       /* the sum of the lifecycles' waits: the table's floor */
  long next_rev;     /* one past the last declared revision */
} ll_lease_plan;

/* The plan for break_period (1..60 s); destructive: the operator passed
 * --destructive --after DIR, else the cells whose documented outcome is an
 * accepted unconditioned write are planned NOT_REACHED. */
ll_status ll_lease_plan_build(long break_period, int destructive,
                              ll_lease_plan *p, ll_error *err) LL_WARN_UNUSED;

/* The plan as printed before the first request and by --plan: one line per
 * lifecycle, then one line per request it will send, each with the step
 * label its intent row carries (a "poll" line stands for one or more
 * properties reads of that label). A malloc'd string, NULL on OOM. */
char *ll_lease_plan_text(const ll_lease_plan *p);

/* The documented state (x-ms-lease-state) of s: "available", "leased", ... */
const char *ll_lease_state_key(ll_lease_state s);
/* "<state>/<op>", the outcome row's cell field. */
void ll_lease_cell_label(ll_lease_state s, ll_lease_op op, char *buf,
                         size_t cap);
/* Names back to values: 0 and *out set, or -1 when unknown. */
int ll_lease_state_from_name(const char *name, ll_lease_state *out);
int ll_lease_op_from_name(const char *name, ll_lease_op *out);

/* ---- the engine (lease_table.c) -------------------------------------- */

/* Computes the plan, checks a destructive plan's authorisation (after_dir),
 * declares every payload it writes and records the plan in a note row, all
 * before the first request. Once per run. *out_plan: the plan, owned by the
 * run. */
ll_status ll_lease_table_begin(ll_run *r, long break_period, int destructive,
                               const char *after_dir,
                               const ll_lease_plan **out_plan,
                               ll_error *err) LL_WARN_UNUSED;

/* Starts the plan's next lifecycle: the previous one is cleaned up first
 * (its unattempted cells NOT_REACHED), then a fresh lifecycle, its
 * create-only Put Blob, the read-back and the state's establishment. *out:
 * {epoch, state, reached, reason}, the caller deletes it. LL_E_ORDER when
 * every lifecycle has run. */
ll_status ll_lease_table_lifecycle(ll_run *r, cJSON **out,
                                   ll_error *err) LL_WARN_UNUSED;

/* Attempts cell (s, op), which must be the current lifecycle's next one
 * (else LL_E_ORDER, nothing sent), then reads properties (and the content
 * where a write was attempted), judges and appends the cell row; *out is
 * that row (export), the caller deletes it. After the lifecycle's last cell
 * the blob is cleaned up. */
ll_status ll_lease_table_cell(ll_run *r, ll_lease_state s, ll_lease_op op,
                              cJSON **out, ll_error *err) LL_WARN_UNUSED;

/* Closes the table before the decision (run:finish calls it first): the
 * current lifecycle is cleaned up and every cell without a row gets its
 * NOT_REACHED row. Nothing when the run is no table run. A run that ends
 * without it decides HOLD: its table is incomplete. */
ll_status ll_lease_table_close(ll_run *r, ll_error *err) LL_WARN_UNUSED;

/* The run's table plan, or NULL when it runs no table. */
const ll_lease_plan *ll_lease_table_plan(const ll_run *r);

#endif
