/* Internal layout of ll_run, shared by run.c (requests), run_open.c
 * (opening, recovery), run_request.c (the request pipeline) and flow.c (probe,
 * poller, reconcile). */
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
  ll_auth *auth; /* the default credential */
  ll_auth *actor_auth[LL_ACTOR__COUNT];
  char auth_source[LL_CRED_SOURCE_MAX];
  char actor_source[LL_ACTOR__COUNT][LL_CRED_SOURCE_MAX];
  ll_target target;
  char run_id[160];
  size_t max_single_put;
  long deadline_s;          /* the operator's, from ll_run_config */
  int64_t deadline_ns;      /* the run's clock past which nothing leaves; 0 */
  size_t evidence_base;     /* the protected ledger's size when this session
                               opened: the bound counts from it */
  int closing;              /* the host is ending the run (ll_run_abandon): its
                               stop row is a closing row, not a start */
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
  struct ll_lease_table *table; /* the lease table's state (lease_table.c) */
  int table_engine; /* > 0 while the table's engine runs a step: in a run
                       opened for the lease table only it sends requests
                       and starts lifecycles (ll_run_table_refuses) */
};

/* run.c: folds row into the model and appends it; _take takes row (NULL:
 * its builder ran out of memory, and the run dies), ll_run_append copies. */
ll_status ll_run_append_take(ll_run *r, cJSON *row,
                             ll_error *err) LL_WARN_UNUSED;
ll_status ll_run_append(ll_run *r, const cJSON *row,
                        ll_error *err) LL_WARN_UNUSED;
/* The writer bound to alias, or NULL. */
ll_writer *ll_run_writer(ll_run *r, const char *alias);
/* Binds alias -> id for the sanitizer and appends its lease_bind row. */
ll_status ll_run_bind_row(ll_run *r, const char *alias, const char *id,
                          const char *state, ll_error *err) LL_WARN_UNUSED;
/* Appends the refusal row of code (err holds its message) and returns
 * code with err as it was, or the append's failure. */
ll_status ll_run_refusal(ll_run *r, const char *step, const char *op,
                         const char *actor, ll_status code,
                         ll_error *err) LL_WARN_UNUSED;
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
/* The export row of the last append (the sealed tree itself, taken from
 * the ledger, which keeps none), the caller's to delete; NULL once taken. */
cJSON *ll_run_last_export(ll_run *r);
/* Appends the decision row (the fold fills it), writes expected.json and
 * decision.json, and remembers the decision. The transport is not ended. */
ll_status ll_run_record_decision(ll_run *r, cJSON **out,
                                 ll_error *err) LL_WARN_UNUSED;
/* The destructive lifecycle's authorisation: after_dir holds an accepted,
 * cleaned-up main run on this blob that verifies. */
ll_status ll_run_check_after(ll_run *r, const char *after_dir,
                             ll_error *err) LL_WARN_UNUSED;
/* The credential a request of actor sends with (credentials.h), NULL when
 * the run has none for it; *source its source name. */
ll_auth *ll_run_auth_for(ll_run *r, const char *actor, const char **source);
/* The run holds a credential (it is not a replay). */
int ll_run_has_credentials(const ll_run *r);
/* The fingerprint a request of actor records as its principal, or NULL. */
const char *ll_run_principal(ll_run *r, const char *actor);

/* Rewrites expected.json from the declare rows. */
ll_status ll_run_write_expected(ll_run *r, ll_error *err) LL_WARN_UNUSED;

/* run.c: in a run opened for the lease table, a request or a lifecycle
 * that its engine (lease_table.c) did not start is refused (LL_E_ORDER,
 * nothing recorded, nothing sent): each cell is judged in the state C
 * established, and the run sends exactly the printed plan. */
ll_status ll_run_table_refuses(const ll_run *r, const char *what,
                               ll_error *err);

#endif
