/* JWT plumbing for auth: base64url, and reading a token's claims without
 * verifying it (the service verifies; we only check expiry up front).
 * Below auth.h, which includes this header for its callers. */
#ifndef LL_JWT_H
#define LL_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "ll.h"

/* Base64url without padding. Caller frees; NULL on out of memory. */
char *ll_b64url_encode(const unsigned char *data, size_t len);
/* Strict base64url decode of s[0..len); trailing '=' padding is tolerated.
 * On LL_OK *out is a NUL-terminated malloc'd buffer of *out_len bytes.
 * LL_E_PARSE when s is not base64url. */
ll_status ll_b64url_decode(const char *s, size_t len, unsigned char **out,
                           size_t *out_len) LL_WARN_UNUSED;

/* Decode a JWT's exp claim (seconds since epoch) without verifying it. */
ll_status ll_jwt_exp(const char *jwt, int64_t *out_exp,
                     ll_error *err) LL_WARN_UNUSED;

/* Mint the unsigned JWT Azurite's --oauth basic accepts: aud
 * https://storage.azure.com, iss https://sts.windows.net/<tenant>/, nbf and
 * exp around now. Caller frees. */
char *ll_auth_dev_token(int64_t now_s, int64_t lifetime_s);

#endif
