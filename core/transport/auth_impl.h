/* Shared by the credential sources of auth.c and auth_identity.c; not part
 * of the public interface. */
#ifndef LL_AUTH_IMPL_H
#define LL_AUTH_IMPL_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "auth.h"

/* Token file, command output and identity response are capped at this. */
#define SECRET_CAP (64u * 1024u)

/* Wipes then frees a secret string; NULL is fine. */
void ll_auth_wipe_free(char *s);

/* Wipes every string in a parsed tree before freeing it: the tree holds a
 * copy of the token. NULL is fine. */
void ll_auth_json_wipe_delete(cJSON *root);

/* A copy of s[0..len) without surrounding whitespace; NULL on OOM. */
char *ll_auth_dup_trimmed(const char *s, size_t len);

/* The token printed by the token command (o->token_argv, or
 * o->token_command split without a shell): plain, or JSON with
 * accessToken (az account get-access-token) or access_token. */
ll_status ll_auth_token_from_command(const ll_auth_options *o, char **out,
                                     ll_error *err);

/* AZURE_STORAGE_SAS, checked as ll_auth_new documents: *out_sas is the
 * query without '?', *out_sig a copy of its sig= value (both malloc'd,
 * the caller wipes them, also on failure). */
ll_status ll_auth_sas_from_env(ll_clock *clock, int64_t not_after_ms,
                               char **out_sas, char **out_sig, ll_error *err);

/* A SAS time (st, se, skt, ske) after percent-decoding, in one of the
 * forms Azure Storage accepts (YYYY-MM-DD, YYYY-MM-DDThh:mm,
 * YYYY-MM-DDThh:mm:ss[.f{1,7}], each time with an optional Z or +hh:mm /
 * -hh:mm suffix) as UTC ms. LL_E_PARSE otherwise. */
ll_status ll_auth_sas_time(const char *s, size_t len, int64_t *out_ms);

/* A token from IMDS, or from App Service when IDENTITY_ENDPOINT and
 * IDENTITY_HEADER are set. *expires_on is the endpoint's expires_on (0 when
 * absent). One attempt, no proxy, no redirects. */
ll_status ll_auth_token_from_identity(const ll_auth_options *o, char **out,
                                      int64_t *expires_on, ll_error *err);

#endif
