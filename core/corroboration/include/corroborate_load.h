/* Reading the run for `leaselua corroborate` (corroborate_load.c): its
 * export and manifest, the requests it sent, the operation names the logs
 * give them, and the result's named notes. */
#ifndef LL_CORROBORATE_LOAD_H
#define LL_CORROBORATE_LOAD_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "ll.h"

/* Entries kept in each list of the result (the totals count them all). */
#define LL_CORR_LIST_MAX 200
/* The export rows and manifest of dir, read and chain-checked (shared by
 * the join and the query). *rows: caller deletes. */
ll_status ll_corr_load(const char *dir, cJSON **rows, const cJSON **manifest,
                       ll_error *err) LL_WARN_UNUSED;
/* rows' manifest row when it comes first and names the blob; otherwise
 * NULL, with err saying so for dir (LL_E_USAGE). */
const cJSON *ll_corr_manifest(const cJSON *rows, const char *dir,
                              ll_error *err);

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

/* The run's requests: every outcome row, and every intent without one
 * (its outcome is "OPEN"). *out: caller frees (corroborate_load.c). */
ll_status ll_corr_collect(const cJSON *rows, ll_corr_req **out, size_t *n,
                          ll_error *err) LL_WARN_UNUSED;

#endif
