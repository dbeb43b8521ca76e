/* Internal to core/run: the checks of a ledger's request rows that verify
 * and the per-blob lock share: whether its last decision still stands
 * (verify_stands.c) and whether each outcome pairs with its own intent
 * (verify_pairs.c). */
#ifndef LL_VERIFY_IMPL_H
#define LL_VERIFY_IMPL_H

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>

#include "ll.h"

/* The decision row that stands in rows (ledger rows in order, a cJSON
 * array): the last decision row, when no request row (an intent or an
 * outcome) and no recovery row (a reopened session) follows it. NULL when
 * rows hold no decision row, or when one such row follows the last: a run
 * that went on after its decision, or a crafted ledger, has no decision.
 * *decision_seq gets the seq of the last decision row (0: none) and
 * *followed_by the seq of the first row that unseats it (0: none); either
 * may be NULL. verify and the lock read a decision through this only. */
const cJSON *ll_verify_stands(const cJSON *rows, long *decision_seq,
                              long *followed_by);

/* Whether each outcome row of rows pairs with the intent of its request:
 * an earlier intent row with the same event_id, not answered before, that
 * says the same in every field an outcome copies from its intent (run,
 * lifecycle, step, operation, writer, principal, start, method, blob,
 * version, lease alias and ID, payload, shape, client request ID,
 * conditions). An intent that repeats an earlier intent's event_id pairs
 * with nothing either. 0 when all pair; otherwise the seq of the first row
 * that does not, with why (one line) in why[cap]. -1 when memory ran
 * out. An intent without an outcome is no pairing problem: it is an open
 * request, which the decision counts (decide.c). */
long ll_verify_pairs(const cJSON *rows, char *why, size_t cap);

/* verify_files.c. Where a problem of the bundle is written (verify's
 * report: its text and its row), and the writing: o's text and row, and
 * LL_E_TAMPER with that text. */
typedef struct {
  char *text;
  size_t cap;
  long *row;
  char *corr_sha256; /* NULL, or 65 bytes: corroboration.json's sum */
} ll_verify_out;
ll_status ll_verify_vproblem(const ll_verify_out *o, ll_error *err, long row,
                             const char *fmt, va_list ap);
/* A corroboration appended beside the run (docs/CORROBORATION.md) keeps
 * its own chain; when either file is there, both must be, the chain must
 * hold, every settlement row must have its corroboration row, every
 * corroboration row must name this run (run ID, blob, account, from the
 * export's manifest row) and corroboration.json must equal the chain's
 * last corroboration row. exp: the export's rows. With keep, a
 * corroboration.json that passed is handed back there (the caller's to
 * cJSON_Delete; left untouched otherwise). */
ll_status ll_verify_corroboration(const char *dir, const cJSON *exp,
                                  const ll_verify_out *o, cJSON **keep,
                                  ll_error *err);
/* decision.json, when present, must be the export's last decision row;
 * present with none in the ledger is a problem. */
ll_status ll_verify_decision_file(const char *dir, const cJSON *exp,
                                  const ll_verify_out *o, ll_error *err);

#endif
