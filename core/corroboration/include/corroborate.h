/* `leaselua corroborate DIR --logs FILE...`: the run's export joined with
 * the service's own logs (docs/CORROBORATION.md). The join key is the
 * client request ID the run sent fresh on every attempt; the request ID is
 * a second key, documented for the classic log, inferred for the others.
 * Never changes the run's ledgers: it appends to corroboration.jsonl (its
 * own hash chain) and writes corroboration.json. Never includes lua.h. */
#ifndef LL_CORROBORATE_H
#define LL_CORROBORATE_H

#include <cjson/cJSON.h>

#include "ll.h"
#include "logs.h"

typedef enum {
  LL_CORR_CORROBORATED = 0, /* exit 0 */
  LL_CORR_INCOMPLETE = 1,   /* exit 1: what is missing is named */
  LL_CORR_CONTRADICTED = 2  /* exit 2: each contradiction is named */
} ll_corr_verdict;

const char *ll_corr_verdict_name(ll_corr_verdict v);

/* Seconds around the run's window in which an unrecorded record of the
 * blob is looked for (--margin); the default and the largest. */
#define LL_CORR_MARGIN_DEFAULT 300
#define LL_CORR_MARGIN_MAX 86400
/* Slack (ms) between the client's clock and the service's log time when
 * a record is placed inside an attempt's window. */
#define LL_CORR_SKEW_MS 1000

typedef struct {
  int margin_s;
  /* the UTC time to stamp on the rows ("2026-12-01T10:00:00.000Z") */
  const char *now_utc;
} ll_corr_opts;

/* Joins the export of dir with logs and returns the result object (caller
 * deletes) and the verdict. Nothing is written. LL_E_USAGE for a dir
 * without an export ledger or without requests, LL_E_TAMPER for a broken
 * export chain (run leaselua verify), LL_E_NOMEM. */
ll_status ll_corr_run(const char *dir, const ll_log_set *logs,
                      const ll_corr_opts *opts, cJSON **out,
                      ll_corr_verdict *verdict, ll_error *err) LL_WARN_UNUSED;

#endif
