/* What the decision would be with the service's account of each unknown
 * outcome (corroborate.h, ll_corr_rederive): the judgement model folds a
 * copy of the export rows in which each settled UNKNOWN outcome row holds
 * the logged status instead. The run's ledger is never changed. */
#include "corroborate_settle.h"

#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "jsonx.h"
#include "model.h"

/* The logged status of the row's seq, or -1 when it was not settled. */
static long settled_status(const cJSON *settled, long seq) {
  const cJSON *s;
  cJSON_ArrayForEach(s, settled) {
    if (ll_json_long(s, "outcome_seq", -1) != seq)
      continue;
    const char *st = ll_json_str(s, "logged_status");
    char *end = NULL;
    long v = st ? strtol(st, &end, 10) : -1;
    return st && *st && end && !*end ? v : -1;
  }
  return -1;
}

/* The derived fields the model fills again from the settled row. */
static const char *const derived[] = {
    "result_classification", "expectation",
    "discrepancy",           "deviation",
    "lease_state_before",    "lease_status_before",
    "lease_before_source",   "transport_error"};

static void replace(cJSON *row, const char *key, cJSON *v) {
  if (!v)
    return;
  if (cJSON_GetObjectItemCaseSensitive(row, key))
    cJSON_ReplaceItemInObjectCaseSensitive(row, key, v);
  else
    cJSON_AddItemToObject(row, key, v);
}

cJSON *ll_corr_decision_run(const cJSON *rows) {
  const cJSON *d = NULL, *row;
  cJSON_ArrayForEach(row, rows) {
    if (ll_json_is(row, "record", "decision"))
      d = row;
  }
  if (!d)
    return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  const char *dec = ll_json_str(d, "decision");
  if (dec)
    cJSON_AddStringToObject(o, "decision", dec);
  else
    cJSON_AddNullToObject(o, "decision");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(d, "reasons");
  cJSON_AddItemToObject(o, "reasons",
                        r ? cJSON_Duplicate(r, 1) : cJSON_CreateArray());
  cJSON_AddNumberToObject(o, "seq", (double)ll_json_long(d, "seq", 0));
  return o;
}

cJSON *ll_corr_rederive(const cJSON *rows, const cJSON *settled,
                        ll_error *err) {
  ll_model *m = ll_model_new();
  cJSON *reasons = NULL, *out = NULL;
  if (!m) {
    ll_fail(err, LL_E_NOMEM, "out of memory re-deriving the decision");
    return NULL;
  }
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *rec = ll_json_str(row, "record");
    if (rec && (strcmp(rec, "decision") == 0 || strcmp(rec, "stop") == 0))
      continue; /* the decision is what is derived here */
    cJSON *c = cJSON_Duplicate(row, 1);
    if (!c) {
      ll_fail(err, LL_E_NOMEM, "out of memory re-deriving the decision");
      goto cleanup;
    }
    /* only an outcome the run did not learn is settled by the logs */
    long status = rec && strcmp(rec, "outcome") == 0 &&
                          ll_streq(ll_json_str(row, "outcome"), "UNKNOWN")
                      ? settled_status(settled, ll_json_long(row, "seq", 0))
                      : -1;
    if (status >= 0) {
      for (size_t i = 0; i < sizeof derived / sizeof *derived; i++)
        cJSON_DeleteItemFromObjectCaseSensitive(c, derived[i]);
      replace(c, "http_status", cJSON_CreateNumber((double)status));
      replace(c, "outcome", cJSON_CreateString("RESPONSE"));
      replace(c, "transport_error", cJSON_CreateNull());
      /* the lost response's x-ms-version: the service echoes the one
       * requested (Versioning for the Azure Storage services); the logs
       * record the requested one as operationVersion, not the reply */
      const char *v = ll_json_str(row, "requested_api_version");
      if (v)
        replace(c, "returned_api_version", cJSON_CreateString(v));
    }
    ll_error e = {0};
    ll_status st = ll_model_apply(m, c, 1, &e);
    cJSON_Delete(c);
    if (st != LL_OK) {
      ll_fail(err, st, "re-deriving the decision at seq %ld: %s",
              ll_json_long(row, "seq", 0), e.message);
      goto cleanup;
    }
  }
  const char *window = NULL;
  ll_decision d = ll_decide(m, &reasons, &window);
  out = cJSON_CreateObject();
  if (!out) {
    ll_fail(err, LL_E_NOMEM, "out of memory re-deriving the decision");
    goto cleanup;
  }
  cJSON_AddStringToObject(out, "decision", ll_decision_name(d));
  cJSON_AddItemToObject(out, "reasons",
                        reasons ? reasons : cJSON_CreateArray());
  reasons = NULL;
  if (window)
    cJSON_AddStringToObject(out, "window_finding", window);
  cJSON_AddStringToObject(
      out, "basis",
      "the export's rows, each settled UNKNOWN outcome "
      "replaced in memory by its logged status, folded by "
      "the judgement model, the lost response's x-ms-version taken "
      "as the one requested (not a recorded decision)");
cleanup:
  cJSON_Delete(reasons);
  ll_model_free(m);
  return out;
}
