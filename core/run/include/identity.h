/* The identity record (docs/EVIDENCE.md, "Identities"): per actor, the
 * credential's source and what it says about its principal, recorded in
 * the manifest row before the first request; the statement a report and
 * verify print about it; and verify's check that every request row's
 * principal is one recorded for its actor. */
#ifndef LL_IDENTITY_H
#define LL_IDENTITY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "auth.h"
#include "ll.h"
#include "sanitize.h"

/* One actor's entry: {credential, kind, fingerprint|null, idtyp?, tid?,
 * oid?, appid?, azp?, sas?: {sv, sr, sp, st, se, skoid?, sktid?}}. tid,
 * oid, appid, azp, skoid and sktid are for the protected ledger: the
 * export projection drops them (sanitize.c). NULL when out of memory. */
cJSON *ll_identity_entry(const ll_auth *a, const char *source);

/* The identifiers of an identities object that only the protected ledger
 * may hold and that are GUIDs (tid, oid, appid, azp, sas.skoid,
 * sas.sktid): up to cap of them into out (pointers into ids), bound like
 * lease IDs by the run and by verify so that the export scan finds any
 * copy of them (invariant 9). Returns how many there are: more than cap
 * means some were not stored, and the caller refuses. */
#define LL_IDENTITY_ALIAS "{{identity}}"
/* Room for every such identifier of up to 48 identity entries (an
 * actor's each, the observer's, and up to 39 permitted actors when a plan
 * names none; run_open.c asserts a plan's actors fit, and a record with
 * more is refused, never cut short). */
#define LL_IDENTITY_ENTRIES_MAX 48
#define LL_IDENTITY_IDS_MAX                                                    \
  (LL_IDENTITY_PRIVATE_NKEYS * LL_IDENTITY_ENTRIES_MAX)
size_t ll_identity_ids(const cJSON *ids, const char **out, size_t cap);

/* shared_identity of an identities object: false only when at least two
 * actors other than the observer are recorded, each with a fingerprint,
 * and no two of them share one or a credential source. */
int ll_identity_shared(const cJSON *identities);

/* The one sentence about identities, for the manifest row m (export or
 * protected form); see docs/EVIDENCE.md for each case. Absent identities
 * (a replay, a bundle older than them) are unknown, never distinct. */
#define LL_IDENTITY_ONE                                                        \
  "all actors used one identity: the evidence does not distinguish "           \
  "principals"
void ll_identity_statement(const cJSON *m, char *buf, size_t cap);

/* Every request row (intent, outcome) that carries a principal carries
 * one recorded for its actor by the manifest or a recovery row before it
 * (null only when that actor's fingerprint was null). LL_OK, or
 * LL_E_TAMPER with *bad_row (1-based) and a one-line problem. */
ll_status ll_identity_check_rows(const cJSON *rows, long *bad_row,
                                 char *problem, size_t cap) LL_WARN_UNUSED;

#endif
