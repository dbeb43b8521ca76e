/* The credential sources auth.c chooses between, each in its own file
 * below auth.c (auth_command.c, auth_identity.c, auth_sas.c): private to
 * core/transport, and free of auth.h, so that the calls run one way. */
#ifndef LL_AUTH_IMPL_H
#define LL_AUTH_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "input.h"
#include "ll.h"

/* Token file, command output and identity response are capped at the
 * token file's limit. */
#define SECRET_CAP LL_TOKEN_FILE_MAX

/* How far in the future a SAS's st= may lie (clock skew). */
#define LL_AUTH_SAS_START_SKEW_S 300

/* The token printed by the token command (argv, or line split without a
 * shell by ll_auth_split_command when argv is NULL; both set is
 * LL_E_USAGE), killed after timeout_ms (0: LL_AUTH_COMMAND_TIMEOUT_MS):
 * plain, or JSON with accessToken (az account get-access-token) or
 * access_token. */
ll_status ll_auth_token_from_command(const char *const *argv, const char *line,
                                     long timeout_ms, char **out,
                                     ll_error *err);

/* AZURE_STORAGE_SAS, checked as ll_auth_new documents: *out_sas is the
 * query without '?', *out_sig a copy of its sig= value (both malloc'd,
 * the caller wipes them, also on failure). */
ll_status ll_auth_sas_from_env(ll_clock *clock, int64_t not_after_ms,
                               char **out_sas, char **out_sig, ll_error *err);

/* The same for a SAS from another source (v, named label in messages:
 * "AZURE_STORAGE_SAS", "the SAS file of actor B"...). */
ll_status ll_auth_sas_parse(const char *v, const char *label, ll_clock *clock,
                            int64_t not_after_ms, char **out_sas,
                            char **out_sig, ll_error *err);

/* A SAS time (st, se, skt, ske) after percent-decoding, in one of the
 * forms Azure Storage accepts (YYYY-MM-DD, YYYY-MM-DDThh:mm,
 * YYYY-MM-DDThh:mm:ss[.f{1,7}], each time with an optional Z or +hh:mm /
 * -hh:mm suffix) as UTC ms. LL_E_PARSE otherwise. */
ll_status ll_auth_sas_time(const char *s, size_t len, int64_t *out_ms);

/* A token from IMDS (imds_endpoint, or the default when NULL), or from App
 * Service when IDENTITY_ENDPOINT and IDENTITY_HEADER are set, for resource
 * (NULL: https://storage.azure.com/) and the user-assigned client_id (NULL:
 * none). *expires_on is the endpoint's expires_on (0 when absent). One
 * attempt, no proxy, no redirects. */
ll_status ll_auth_token_from_identity(const char *imds_endpoint,
                                      const char *client_id,
                                      const char *resource, char **out,
                                      int64_t *expires_on, ll_error *err);

#endif
