/* The decision over the fold's state (DESIGN.md section 5): HOLD >
 * RECONCILE > WAIT > ACCEPT, the narrow ACCEPT statement, and whether ACCEPT
 * is still reachable. Pure: it reads the model and never changes it. */
#ifndef LL_DECIDE_H
#define LL_DECIDE_H

#include <cjson/cJSON.h>

typedef enum {
  LL_DEC_ACCEPT = 0,
  LL_DEC_WAIT = 1,
  LL_DEC_HOLD = 2,
  LL_DEC_RECONCILE = 3
} ll_decision;

/* The model (model.h); declared here so this header needs nothing above it. */
typedef struct ll_model ll_model;

const char *ll_decision_name(ll_decision d);

/* The decision fold: HOLD > RECONCILE > WAIT > ACCEPT. reasons gets an
 * array of strings (caller deletes). window gets "REPRODUCED",
 * "INCONCLUSIVE_WINDOW" or "NOT_ATTEMPTED". */
ll_decision ll_decide(const ll_model *m, cJSON **reasons, const char **window);
/* Whether further steps in this lifecycle can still end in ACCEPT. 0, with
 * *why (owned by the model) set, when a HOLD or RECONCILE reason stands that
 * no later step removes, or when the lease has left breaking without a
 * fresh breaking observation in this lifecycle (one can no longer be made).
 * The seed: HOLD means there is not enough trustworthy evidence to act, so a
 * flow sends no more mutations once ACCEPT is out of reach. Doubts are not
 * counted: a reconcile can settle them. */
int ll_decide_accept_reachable(const ll_model *m, const char **why);
/* What the decision row's open_doubts counts: the doubts not yet
 * reconciled (ll_model_doubts) and the mutation intents without an
 * outcome, each of which holds the decision at HOLD (the lock reads it). */
int ll_decide_open_doubts(const ll_model *m);
/* The seed's narrow ACCEPT statement, with the endpoint kind. malloc'd. */
char *ll_decide_statement(const ll_model *m, ll_decision d);

#endif
