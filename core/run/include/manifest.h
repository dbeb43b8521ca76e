/* The run manifest (invariant 11): who may do what to which blob, recorded
 * before the first request. */
#ifndef LL_MANIFEST_H
#define LL_MANIFEST_H

#include <cjson/cJSON.h>

#include "blob.h"
#include "ll.h"

/* Parses a user manifest (JSON text). Required: resource_owner, ticket,
 * permitted_actors (non-empty array of strings), cleanup_authority.
 * Optional: run_id, endpoint_kind (azure | emulator), api_version (a
 * date YYYY-MM-DD; whether it is a listed version is checked at build).
 * LL_E_MANIFEST names the first missing or malformed field. */
ll_status ll_manifest_parse(const char *text, size_t len, cJSON **out,
                            ll_error *err) LL_WARN_UNUSED;
/* Validates an already parsed user manifest (same rules). */
ll_status ll_manifest_check(const cJSON *user, ll_error *err) LL_WARN_UNUSED;

/* The Azure Storage service versions leaselua knows (x-ms-version),
 * oldest first, NULL-terminated. LL_API_VERSION is one of them. */
const char *const *ll_manifest_api_versions(void);

/* An api_version (the manifest's, or an operator's --api-version) before
 * it is sent: it must be a date YYYY-MM-DD, and one of
 * ll_manifest_api_versions() unless allow_unlisted (the operator's
 * --allow-api-version). *out_listed (may be NULL) says which. A refusal
 * is LL_E_MANIFEST, one line naming the value and what to do. */
ll_status ll_manifest_api_version_check(const char *v, int allow_unlisted,
                                        int *out_listed,
                                        ll_error *err) LL_WARN_UNUSED;

/* What the operator set beside the manifest, for ll_manifest_build_with. */
typedef struct {
  const char *lua_version;
  const char *fixture_label; /* non-NULL for replay: endpoint_kind "replay" */
  /* The operator's --api-version; NULL: the manifest's api_version, else
   * LL_API_VERSION. When both are given they must be equal. */
  const char *api_version;
  int allow_unlisted_api_version; /* --allow-api-version */
} ll_manifest_input;

/* The manifest row: the user fields plus account host, container, blob
 * path, endpoint kind (inferred from the host when absent, and checked
 * against it), API version and component versions. The API version is
 * checked by ll_manifest_api_version_check; an unlisted one that the
 * operator allowed is recorded with "api_version_unlisted": true. */
ll_status ll_manifest_build_with(const cJSON *user, const ll_target *t,
                                 const ll_manifest_input *in, cJSON **out_row,
                                 ll_error *err) LL_WARN_UNUSED;
/* ll_manifest_build_with without operator flags. */
ll_status ll_manifest_build(const cJSON *user, const ll_target *t,
                            const char *lua_version, const char *fixture_label,
                            cJSON **out_row, ll_error *err) LL_WARN_UNUSED;

/* host[:port] of scheme://host[:port]/..., as recorded in account_host. */
void ll_manifest_account_host(const char *url, char *buf, size_t cap);
/* The account_host a run on t records: LL_REPLAY_HOST for a replay (it
 * talks to no host, so its evidence cannot pass for a run on one), else
 * ll_manifest_account_host of t's URL. */
void ll_manifest_recorded_host(const ll_target *t, int replay, char *buf,
                               size_t cap);

#endif
