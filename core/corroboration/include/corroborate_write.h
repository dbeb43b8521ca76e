/* Writing a corroboration beside the run, and the principal fingerprint
 * (corroborate_write.c). */
#ifndef LL_CORROBORATE_WRITE_H
#define LL_CORROBORATE_WRITE_H

#include <cjson/cJSON.h>

#include "ll.h"
#include "log_rec.h"

/* Appends the result's settlement rows and its corroboration row to
 * dir/corroboration.jsonl and writes dir/corroboration.json atomically.
 * First the printed result is scanned (core/evidence's secret scan) for
 * every requester object ID of logs and for any SAS signature: a hit is
 * LL_E_INTERNAL and nothing is written (a raw oid never reaches a file). */
ll_status ll_corr_write(const char *dir, const cJSON *result,
                        const ll_log_set *logs, ll_error *err) LL_WARN_UNUSED;

/* The principal fingerprint of a tenant and object ID (the shared
 * contract): the first 16 hex of SHA-256 over
 * "leaselua-principal-v1:" lower(tid) ":" lower(oid). */
ll_status ll_corr_fingerprint(const char *tid, const char *oid,
                              char out[17]) LL_WARN_UNUSED;

#endif
