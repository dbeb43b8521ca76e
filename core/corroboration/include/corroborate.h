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
/* Entries kept in each list of the result (the totals count them all). */
#define LL_CORR_LIST_MAX 200
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

/* Appends the result's settlement rows and its corroboration row to
 * dir/corroboration.jsonl and writes dir/corroboration.json atomically. */
ll_status ll_corr_write(const char *dir, const cJSON *result,
                        ll_error *err) LL_WARN_UNUSED;

/* The principal fingerprint of a tenant and object ID (the shared
 * contract): the first 16 hex of SHA-256 over
 * "leaselua-principal-v1:" lower(tid) ":" lower(oid). */
ll_status ll_corr_fingerprint(const char *tid, const char *oid,
                              char out[17]) LL_WARN_UNUSED;

/* What the run's decision would be with each settled outcome in place of
 * its UNKNOWN (settled: [{seq, status}]), folded over a copy of the export
 * rows by the judgement model: {decision, reasons, window_finding}. The
 * ledger is never changed. NULL with err filled on failure. */
cJSON *ll_corr_rederive(const cJSON *export_rows, const cJSON *settled,
                        ll_error *err);

/* --print-query: the KQL over StorageBlobLogs for the run's window and
 * blob (every column corroborate reads), the az command that runs it, and
 * the prefixes a diagnostic setting writes its JSON lines under. */
ll_status ll_corr_query(const char *dir, int margin_s, ll_buf *out,
                        ll_error *err) LL_WARN_UNUSED;

/* The export rows and manifest of dir, read and chain-checked (shared by
 * the join and the query). *rows: caller deletes. */
ll_status ll_corr_load(const char *dir, cJSON **rows, const cJSON **manifest,
                       ll_error *err) LL_WARN_UNUSED;

#endif
