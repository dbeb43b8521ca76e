/* The run manifest (invariant 11): who may do what to which blob, recorded
 * before the first request. */
#ifndef LL_MANIFEST_H
#define LL_MANIFEST_H

#include <cjson/cJSON.h>

#include "blob.h"
#include "ll.h"

/* Parses a user manifest (JSON text). Required: resource_owner, ticket,
 * permitted_actors (non-empty array of strings), cleanup_authority.
 * Optional: run_id, endpoint_kind (azure | emulator), api_version.
 * LL_E_MANIFEST names the first missing or malformed field. */
ll_status ll_manifest_parse(const char *text, size_t len, cJSON **out,
                            ll_error *err) LL_WARN_UNUSED;
/* Validates an already parsed user manifest (same rules). */
ll_status ll_manifest_check(const cJSON *user, ll_error *err) LL_WARN_UNUSED;

/* The manifest row: the user fields plus account host, container, blob
 * path, endpoint kind (inferred from the host when absent, and checked
 * against it), API version and component versions. fixture_label is
 * non-NULL for replay, which makes endpoint_kind "replay". */
ll_status ll_manifest_build(const cJSON *user, const ll_target *t,
                            const char *lua_version, const char *fixture_label,
                            cJSON **out_row, ll_error *err) LL_WARN_UNUSED;

/* host[:port] of scheme://host[:port]/..., as recorded in account_host. */
void ll_manifest_account_host(const char *url, char *buf, size_t cap);

#endif
