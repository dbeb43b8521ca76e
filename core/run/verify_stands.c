/* Whether a ledger's last decision still stands: the one predicate that
 * verify's report and the per-blob lock both read a decision through. */
#include "verify_impl.h"

#include "jsonx.h"

/* Rows after which a decision is no longer the last word: a request, or a
 * session reopened on the bundle (a recovery sends requests next). */
static int unseats(const cJSON *row) {
  return ll_json_is(row, "record", "intent") ||
         ll_json_is(row, "record", "outcome") ||
         ll_json_is(row, "record", "recovery");
}

const cJSON *ll_verify_stands(const cJSON *rows, long *decision_seq,
                              long *followed_by) {
  const cJSON *row, *last = NULL, *after = NULL;
  cJSON_ArrayForEach(row, rows) {
    if (ll_json_is(row, "record", "decision")) {
      last = row;
      after = NULL;
    } else if (last && !after && unseats(row)) {
      after = row;
    }
  }
  if (decision_seq)
    *decision_seq = last ? ll_json_long(last, "seq", 0) : 0;
  if (followed_by)
    *followed_by = after ? ll_json_long(after, "seq", 0) : 0;
  return last && !after ? last : NULL;
}
