/* The decision re-derived with settled outcomes (corroborate_settle.c). */
#ifndef LL_CORROBORATE_SETTLE_H
#define LL_CORROBORATE_SETTLE_H

#include <cjson/cJSON.h>

#include "ll.h"

/* What the run's decision would be with each settled outcome in place of
 * its UNKNOWN (settled: [{seq, status}]), folded over a copy of the export
 * rows by the judgement model: {decision, reasons, window_finding}. The
 * ledger is never changed. NULL with err filled on failure. */
cJSON *ll_corr_rederive(const cJSON *export_rows, const cJSON *settled,
                        ll_error *err);

/* The run's own decision as a corroboration states it (decision_run):
 * {decision, reasons, seq} of the last decision row of export_rows, or a
 * JSON null when there is none; NULL when memory ran out. corroborate
 * writes it, and verify compares it with what was written. */
cJSON *ll_corr_decision_run(const cJSON *export_rows);

#endif
