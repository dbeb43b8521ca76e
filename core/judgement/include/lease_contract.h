/* The documented lease contract (issue 18): Microsoft's Lease Blob outcome
 * tables as reviewed data, one cell per (lease state, attempt), each with its
 * source, and a judge of one observation against one cell. */
#ifndef LL_LEASE_CONTRACT_H
#define LL_LEASE_CONTRACT_H

#include <stddef.h>

typedef enum {
  LL_LS_AVAILABLE,
  LL_LS_LEASED,   /* Leased (A) */
  LL_LS_BREAKING, /* Breaking (A) */
  LL_LS_BROKEN,   /* Broken (A) */
  LL_LS_EXPIRED,  /* Expired (A) */
  LL_LS_COUNT
} ll_lease_state;

typedef enum {
  LL_LO_WRITE_A,
  LL_LO_WRITE_B,
  LL_LO_WRITE_NONE,
  LL_LO_READ_A,
  LL_LO_READ_B,
  LL_LO_READ_NONE,
  LL_LO_ACQUIRE_NONE, /* acquire with no proposed ID */
  LL_LO_ACQUIRE_A,
  LL_LO_ACQUIRE_B,
  LL_LO_BREAK_0,
  LL_LO_BREAK_N, /* break period > 0 */
  LL_LO_CHANGE_AB,
  LL_LO_CHANGE_BA,
  LL_LO_CHANGE_BC,
  LL_LO_RENEW_A,
  LL_LO_RENEW_B,
  LL_LO_RELEASE_A,
  LL_LO_RELEASE_B,
  LL_LO_EXPIRE, /* the duration expiring: no request */
  LL_LO_COUNT
} ll_lease_op;

/* How far an outcome was checked against page text during review. */
typedef enum {
  LL_CHECK_NONE, /* not seen in page text: the reviewer's reading */
  LL_CHECK_PAGE  /* the cell's wording was read in the cited page's text */
} ll_lease_check;

typedef struct {
  const char *id; /* "lease-blob", "put-blob", ... */
  const char *title;
  const char *url;
} ll_lease_source;

typedef struct {
  long status;             /* 0: no response (the duration expiring) */
  const char *family;      /* NULL: success; else the error family */
  const char *state_after; /* "available", "leased", ... */
  const char *holder;      /* "A", "B", "X" (a new ID), or NULL */
  const char *source;      /* an ll_lease_source id */
  const char *section;     /* the table or section of that page */
  const char *source_text; /* the cell's wording, quoted */
  ll_lease_check check;
} ll_lease_outcome;

typedef struct {
  ll_lease_state state;
  ll_lease_op op;
  int n_outcomes; /* 2 where two sources disagree */
  ll_lease_outcome outcome[2];
  const char *condition[2]; /* NULL-padded conditions attached to the cell */
} ll_lease_cell;

typedef enum {
  LL_VERDICT_DEVIATES,
  LL_VERDICT_CONFORMS,
  LL_VERDICT_CONFORMS_ONE_SOURCE
} ll_lease_verdict;

/* What was seen: status (0 when no request was sent), the error code
 * verbatim or NULL, the lease state read after ("leased", ...) or NULL. */
typedef struct {
  long status;
  const char *code;
  const char *state_after;
} ll_lease_observation;

const char *ll_lease_state_name(ll_lease_state s);
const char *ll_lease_op_name(ll_lease_op op);
const char *ll_lease_verdict_name(ll_lease_verdict v);

/* The cell of (state, op), or NULL when out of range or missing. */
const ll_lease_cell *ll_lease_contract_cell(ll_lease_state s, ll_lease_op op);
/* Iteration: cells 0 .. ll_lease_contract_count() - 1 in table order. */
size_t ll_lease_contract_count(void);
const ll_lease_cell *ll_lease_contract_at(size_t i);
/* The source named id, or NULL. */
const ll_lease_source *ll_lease_contract_source(const char *id);

/* Judge an observation against a cell: CONFORMS when it matches every
 * source, CONFORMS_ONE_SOURCE when the sources disagree and it matches one,
 * DEVIATES otherwise (a NULL cell or observation DEVIATES). A rejection
 * matches when its status is the cell's and its code is in the family; the
 * state after must be observed and equal the cell's. */
ll_lease_verdict ll_lease_contract_judge(const ll_lease_cell *cell,
                                         const ll_lease_observation *obs);

/* docs/LEASE_CONTRACT.md rendered from the data: a malloc'd string the
 * caller frees, or NULL when out of memory. */
char *ll_lease_contract_markdown(void);

#endif
