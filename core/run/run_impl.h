/* Internal layout of ll_run, shared by run.c (requests), run_open.c
 * (opening, recovery, outcome rows) and flow.c (probe, poller, reconcile). */
#ifndef LL_RUN_IMPL_H
#define LL_RUN_IMPL_H

#include "hash.h"
#include "lock.h"
#include "run.h"

#define LL_MAX_WRITERS 8

typedef struct {
  char alias[LL_ALIAS_MAX];
  char lease_id[LL_GUID_LEN]; /* secret: process memory and protected only */
} ll_writer;

struct ll_run {
  ll_ledger *ledger;
  ll_model *model;
  ll_transport *transport;
  ll_clock *clock;
  ll_auth *auth;
  ll_target target;
  char run_id[160];
  size_t max_single_put;
  size_t oversize_for_test; /* tests only: pretend the body is this long */
  ll_writer writers[LL_MAX_WRITERS];
  int nwriters;
  long events;
  int dead;  /* the ledger failed: nothing more may be sent */
  int nomem; /* ...because an allocation failed (LL_E_NOMEM, exit 70) */
  unsigned long alloc_mark; /* ll_alloc_failures() when the run opened */
  ll_lock *lock;            /* one run per blob at a time (NULL for a replay) */
  int expected_dirty;
  char step[96];     /* the script's current step label */
  ll_flow_plan plan; /* what the flow declared at open (ll_run_plan) */
  int planned;
  int decision; /* the recorded ll_decision, -1 none */
  /* A strict-replay failure (LL_E_REPLAY): the run answers every later
   * call with it, so nothing plausible is recorded after a divergence. */
  ll_error replay_failure;
};

ll_status ll_run_append(ll_run *r, cJSON *row, ll_error *err) LL_WARN_UNUSED;
/* LL_OK while no counted allocation has failed since the run opened; else
 * the run is dead (nothing more is sent or recorded) and LL_E_NOMEM. One
 * check covers every cJSON_Add* of a row builder (alloc.h). */
ll_status ll_run_check_alloc(ll_run *r, ll_error *err) LL_WARN_UNUSED;
/* LL_E_NOMEM or LL_E_DURABILITY, filled in, once the run is dead. */
ll_status ll_run_dead(ll_run *r, ll_error *err) LL_WARN_UNUSED;
/* The end of every public run operation: st, unless it is LL_E_NOMEM or a
 * counted allocation failed since the run opened; then the run dies, *out
 * (when given) is deleted and NULLed, and the result is LL_E_NOMEM. */
ll_status ll_run_settle(ll_run *r, ll_status st, cJSON **out,
                        ll_error *err) LL_WARN_UNUSED;
/* A copy of the last export row (caller deletes), or NULL. */
cJSON *ll_run_last_export(ll_run *r);
cJSON *ll_run_outcome_row(ll_run *r, const cJSON *intent, const ll_req_spec *s,
                          const ll_http_response *resp,
                          const ll_writer *proposed);
/* Appends the decision row (the fold fills it), writes expected.json and
 * decision.json, and remembers the decision. The transport is not ended. */
ll_status ll_run_record_decision(ll_run *r, cJSON **out,
                                 ll_error *err) LL_WARN_UNUSED;
/* The destructive lifecycle's authorisation: after_dir holds an accepted,
 * cleaned-up main run on this blob that verifies. */
ll_status ll_run_check_after(ll_run *r, const char *after_dir,
                             ll_error *err) LL_WARN_UNUSED;
/* run_preflight.c, invariant 15: the preflight read before the run's first
 * mutation (next); only a failure to record it is returned. And the one
 * properties read after a create refused because the blob exists. */
ll_status ll_run_preflight(ll_run *r, const ll_req_spec *next,
                           ll_error *err) LL_WARN_UNUSED;
ll_status ll_run_record_existing(ll_run *r, ll_error *err) LL_WARN_UNUSED;
/* Rewrites expected.json from the declare rows. */
ll_status ll_run_write_expected(ll_run *r, ll_error *err) LL_WARN_UNUSED;

#endif
