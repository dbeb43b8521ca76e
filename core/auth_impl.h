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

/* A token from IMDS, or from App Service when IDENTITY_ENDPOINT and
 * IDENTITY_HEADER are set. *expires_on is the endpoint's expires_on (0 when
 * absent). One attempt, no proxy, no redirects. */
ll_status ll_auth_token_from_identity(const ll_auth_options *o, char **out,
                                      int64_t *expires_on, ll_error *err);

#endif
