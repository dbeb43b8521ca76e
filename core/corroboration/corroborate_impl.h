/* Internal to corroborate*.c: the ledger's requests as the join sees them. */
#ifndef LL_CORROBORATE_IMPL_H
#define LL_CORROBORATE_IMPL_H

#include <stdint.h>

#include "corroborate.h"

typedef struct {
  const cJSON *row; /* the outcome row, or an intent without one */
  long seq;
  const char *event_id, *operation, *actor, *crid, *xreq, *outcome;
  const char *logged_op; /* the operation name the logs use */
  long status;           /* -1: no response */
  int64_t t0, t1;        /* request sent, response received (ms) */
  int matches;
  long rec; /* index of the one matching record, or -1 */
} ll_corr_req;

/* The operation name Azure's logs give a ledger operation ("Put Blob" ->
 * "PutBlob"), or NULL. */
const char *ll_corr_logged_op(const char *ledger_op);

/* Appends {check, text} to list (counted in *total; at most
 * LL_CORR_LIST_MAX kept). */
void ll_corr_note(cJSON *list, long *total, const char *check, const char *fmt,
                  ...) LL_PRINTF(4, 5);

/* ms since the epoch as "2026-12-01T09:00:00.000Z" (corroborate_query.c). */
void ll_corr_fmt_time(int64_t ms, char *buf, size_t cap);

#endif
