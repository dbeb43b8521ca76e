/* The verdict's JSON fields that `leaselua verify --json` (l_verify.c) and
 * the bundle commands' facts (l_bundle.c: compare, qualify, the JUnit
 * report) share, each added in one place. */
#ifndef LL_L_VERDICT_H
#define LL_L_VERDICT_H

#include <cjson/cJSON.h>

#include "sign.h"
#include "verify.h"

/* In `verify --json`'s order: what the run concluded (decision, window,
 * reasons), and what was checked of what kind of bundle (protected_checked,
 * export_only, endpoint_kind, fixture_label, host_declared, identity). An empty
 * string is null. 1, or 0 when memory ran out (o is then partly filled). */
int ll_verdict_outcome(cJSON *o, const ll_verify_report *rep);
int ll_verdict_scope(cJSON *o, const ll_verify_report *rep);
/* Who signed, in `verify --json`'s order: state, principal, key (the
 * fingerprint), key_type. 1, or 0 when memory ran out. */
int ll_verdict_signer(cJSON *o, const ll_sign_report *sr);
/* s as a JSON string, or null when s is NULL or empty. */
cJSON *ll_verdict_str_or_null(const char *s);

#endif
