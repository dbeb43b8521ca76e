/* Internal to core/run: the checked row builder and the rows of a run
 * (run_row.c). A builder never appends; run.c does. */
#ifndef LL_RUN_ROW_H
#define LL_RUN_ROW_H

#include <cjson/cJSON.h>

#include "blob.h"
#include "clock.h"
#include "hash.h"
#include "http.h"
#include "ledger.h"
#include "ll.h"

/* A row under construction. A failed allocation sets oom, after which
 * every add is a no-op; ll_row_end is the one check: it returns the row,
 * or NULL (the row deleted) when any add failed. Keys must be string
 * literals: they are kept, not copied. */
/* A recovered break's period: its intent does not record it. */
#define LL_BREAK_PERIOD_UNKNOWN (-2)

typedef struct {
  cJSON *o;
  int oom;
} ll_row;

void ll_row_begin(ll_row *b, const char *record);
void ll_row_str(ll_row *b, const char *k, const char *v); /* NULL: "" */
void ll_row_num(ll_row *b, const char *k, double v);
void ll_row_bool(ll_row *b, const char *k, int v);
cJSON *ll_row_end(ll_row *b);

/* Alias -> lease ID (protected only); state "proposed", "active" or NULL. */
cJSON *ll_row_bind(const char *alias, const char *id, const char *state);
/* What was refused, the code and the invariant it names. */
cJSON *ll_row_refusal(long epoch, const char *step, const char *op,
                      const char *actor, const char *code, int invariant,
                      const char *message);

/* The fields of an intent row; NULL lease_real_id and revision < 0 are
 * recorded as null, if_none_match/if_match/preflight only when set. */
typedef struct {
  const char *run_id, *event_id, *step, *operation, *actor, *started;
  const char *method, *blob_path, *api_version, *lease_alias;
  const char *lease_real_id, *payload_sha256, *shape, *client_request_id;
  const char *if_none_match, *if_match;
  const char *principal; /* the credential's fingerprint; NULL: null */
  long epoch, revision;
  int preflight;
} ll_intent_fields;
cJSON *ll_row_intent(const ll_intent_fields *f);

/* What an outcome row reads of its run. */
typedef struct {
  const ll_ledger *ledger; /* its secrets, for the redaction */
  const char *endpoint_kind;
  long long now_ms;  /* the receive time when the response has none */
  int acquire_match; /* an acquire or a change records
                        returned_lease_matches_proposed */
  ll_op op;          /* what the intent asked for */
  int preflight;     /* the preflight read: its findings are recorded */
  long break_period; /* a break's period, recorded with it;
                        LL_BREAK_PERIOD_UNKNOWN: recorded as null */
} ll_outcome_ctx;
/* The outcome row of intent in for the response real (the service's echo
 * of a secret replaced and noted). NULL when out of memory. */
cJSON *ll_row_outcome(const ll_outcome_ctx *c, const cJSON *in,
                      const ll_http_response *real, const char *proposed_id);

#endif
