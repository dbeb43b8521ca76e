/* The verdict's JSON fields shared by `verify --json` and the bundle
 * commands' facts (l_verdict.h). */
#include "l_verdict.h"

cJSON *ll_verdict_str_or_null(const char *s) {
  return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

int ll_verdict_outcome(cJSON *o, const ll_verify_report *rep) {
  int ok = cJSON_AddItemToObject(o, "decision",
                                 ll_verdict_str_or_null(rep->decision));
  ok = ok &&
       cJSON_AddItemToObject(o, "window", ll_verdict_str_or_null(rep->window));
  cJSON *reasons = ok ? cJSON_AddArrayToObject(o, "reasons") : NULL;
  ok = reasons != NULL;
  for (int i = 0; ok && i < rep->n_reasons; i++)
    ok = cJSON_AddItemToArray(reasons, cJSON_CreateString(rep->reasons[i]));
  return ok;
}

int ll_verdict_scope(cJSON *o, const ll_verify_report *rep) {
  int ok = cJSON_AddBoolToObject(o, "protected_checked", rep->protected_read) !=
           NULL;
  ok = ok && cJSON_AddBoolToObject(o, "export_only", rep->export_only);
  ok = ok && cJSON_AddItemToObject(o, "endpoint_kind",
                                   ll_verdict_str_or_null(rep->endpoint_kind));
  ok = ok && cJSON_AddItemToObject(o, "fixture_label",
                                   ll_verdict_str_or_null(rep->fixture_label));
  ok = ok && cJSON_AddBoolToObject(o, "host_declared", rep->host_declared);
  ok = ok && cJSON_AddItemToObject(o, "identity",
                                   ll_verdict_str_or_null(rep->identity));
  return ok;
}

int ll_verdict_signer(cJSON *o, const ll_sign_report *sr) {
  int ok =
      cJSON_AddStringToObject(o, "state", ll_sig_state_name(sr->state)) != NULL;
  ok = ok && cJSON_AddItemToObject(o, "principal",
                                   ll_verdict_str_or_null(sr->principal));
  ok = ok && cJSON_AddItemToObject(o, "key",
                                   ll_verdict_str_or_null(sr->key.fingerprint));
  return ok && cJSON_AddItemToObject(o, "key_type",
                                     ll_verdict_str_or_null(sr->key.type));
}
