/* Shared by lease_plan.c (the plan and its text), lease_table.c (the
 * engine), lease_cell.c (a cell) and lease_io.c (requests and waits): the
 * one request a cell sends, so the printed plan and the run cannot disagree
 * about it, and the table's state inside a run. */
#ifndef LL_LEASE_TABLE_IMPL_H
#define LL_LEASE_TABLE_IMPL_H

#include "hash.h"
#include "lease_table.h"

typedef struct {
  int sends; /* 0: the cell sends nothing (the duration expiring) */
  ll_op op;
  const char *actor;     /* "A", "B", "operator", "observer" */
  const char *lease;     /* the alias whose lease ID is sent, or NULL */
  const char *proposed;  /* acquire: the alias proposed, NULL: no ID */
  const char *change_to; /* change: the alias of the proposed ID */
  long duration;         /* acquire: -1 (infinite) */
  long break_period;     /* break: 0 or the plan's period; else -1 */
  long revision; /* Put Blob: the declared revision, else LL_NO_REVISION */
  int bound;     /* the actor writes under a lease */
} ll_lt_req;

/* The request of cell c under plan p. */
void ll_lt_cell_request(const ll_lease_plan *p, const ll_lt_cell *c,
                        ll_lt_req *out);
/* The cell is a write (its content is read after the attempt). */
int ll_lt_cell_writes(const ll_lt_cell *c);
/* The documented state after the lifecycle's last cell (its first
 * outcome), which the plan's cleanup is written for. */
const char *ll_lt_life_end_state(const ll_lease_plan *p, const ll_lt_life *l);
/* The cleanup breaks the lease first when the state is one of these. */
int ll_lt_cleanup_breaks(const char *state);

/* The lease table's state inside a run (run_impl.h holds a pointer). */
#define LL_LT_WAIT_SLACK_MS 30000  /* past the documented end, then give up */
#define LL_LT_WAIT_BUDGET 40       /* properties reads per wait */
#define LL_LT_WAIT_FLOOR_MS 250    /* the densest poll spacing */
#define LL_LT_BREAK_MARGIN_MS 2000 /* a Breaking cell needs this much left */
#define LL_LT_WAIT_LAND_MS 250     /* land this long after the documented end */

typedef struct ll_lease_table {
  ll_lease_plan plan;
  int life;         /* the current lifecycle's index, -1 before the first */
  int k;            /* the next cell's index within it */
  int reached;      /* its state was established and has not drifted */
  int created;      /* its create-only Put Blob was accepted */
  int cleaned;      /* its cleanup ran */
  int stopped;      /* the table stopped: nothing more is sent */
  int closed;       /* every cell has its row */
  int cont;         /* continuations of the current lifecycle so far */
  int drifted;      /* a preserving cell left the state: the next cell
                       goes on on a fresh lifecycle of the same state */
  long create_rev;  /* the current (continuation) lifecycle's create */
  char reason[400]; /* why the lifecycle's cells are NOT_REACHED */
  char stop_reason[400]; /* why the table stopped */
  char fail_reason[400]; /* the last request that failed, and how */
  char obs_state[24];    /* the last properties read's x-ms-lease-state */
  double acquired_ns;    /* the establishing acquire's end (monotonic) */
  double break_ns;       /* the establishing break's end */
  char after[512];       /* the operator's --after DIR */
} ll_lease_table;

/* Step labels, the same in the plan's text and in the intent rows. */
#define LL_LT_STEP_MAX 96
/* "L<life> ...", or "L<life>.<cont> ..." on the cont-th continuation of a
 * lifecycle (a preserving cell that left the state: its later cells go on
 * on a fresh lifecycle of the same state). */
void ll_lt_step(char *buf, size_t cap, int life, int cont, const char *fmt, ...)
    LL_PRINTF(5, 6);

#endif
